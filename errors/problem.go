package errors

import (
	stderrors "errors"
	"fmt"
	"net/http"
)

// ProblemContentType is the media type of every error body (RFC 9457).
const ProblemContentType = "application/problem+json"

// Problem is the RFC 9457 body of every error response. `code` and `error` are the fields the Lance
// clients read; the rest is the RFC's.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      int    `json:"code"`
	Error     string `json:"error"`
	Instance  string `json:"instance,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Context is the spec's ErrorResponse.context (string values): set only on the answer of an
	// operation that committed but whose follow-up failed (Committed), with "committed": "true"
	// and the transaction's id when there is one.
	Context map[string]string `json:"context,omitempty"`
}

// TypeURI names a code in a problem's `type`.
func TypeURI(c Code) string { return "urn:lance-namespace:error:" + c.Name() }

// transportError is an error the HTTP layer itself raised (no route, wrong method, body too large):
// its status is a fact of the transport, not a choice of the domain, so it travels as is.
type transportError struct {
	err    *Error
	status int
}

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// Transport marks an error raised by the HTTP layer with its own status. Domain code never calls it.
func Transport(status int, code Code, message string) error {
	return &transportError{err: &Error{Code: code, Message: message}, status: status}
}

// FromTransport is the code of an error the HTTP layer raised with status (no route, wrong
// method, a body too large or of the wrong type, a rate limit): the status travels as is, the code
// is the spec's closest. message is the transport's own (a 404 or 405 gets a fixed one, as no
// operation is there to describe); cause is kept for logs. A transport failure at 5xx other than
// 503 is an internal error.
func FromTransport(status int, message string, cause error) error {
	code := InvalidInput
	switch status {
	case http.StatusNotFound:
		return Transport(status, Unsupported, "no operation is routed at this path")
	case http.StatusMethodNotAllowed:
		return Transport(status, Unsupported, "this path does not accept this method")
	case http.StatusUnauthorized:
		code = Unauthenticated
	case http.StatusForbidden:
		code = PermissionDenied
	case http.StatusTooManyRequests:
		code = Throttling
	case http.StatusServiceUnavailable:
		code = ServiceUnavailable
	}
	if (status >= 500 && code != ServiceUnavailable) || status < 400 {
		return Wrap(Internal, cause, "")
	}
	return Transport(status, code, message)
}

// ProblemFor is the one translation of an error into its problem body. Server faults (5xx) never
// show their detail: the caller logs err in full next to the request id instead. The one
// exception is an operation that committed but whose follow-up failed (Committed): 500 code 18
// with a type of its own (CommittedType), its catalog-authored detail shown (never its cause's),
// and a context saying it committed, so the caller knows not to retry it.
func ProblemFor(err error, instance, requestID string) Problem {
	code, detail, committed, ok := decide(err)
	if !ok {
		code, detail = Internal, Internal.Title()
	}
	status := code.HTTPStatus()
	var te *transportError
	if stderrors.As(err, &te) {
		status = te.status
	}
	typ := TypeURI(code)
	var context map[string]string
	switch {
	case committed != nil:
		typ, context = CommittedType, committed.context()
		if requestID != "" {
			detail += " (request id " + requestID + ")"
		}
	case status >= 500:
		detail = redacted(code, requestID)
	}
	return Problem{
		Context:   context,
		Type:      typ,
		Title:     code.Title(),
		Status:    status,
		Detail:    detail,
		Code:      int(code),
		Error:     detail,
		Instance:  instance,
		RequestID: requestID,
	}
}

func redacted(code Code, requestID string) string {
	if requestID == "" {
		return code.Title()
	}
	return fmt.Sprintf("%s (request id %s; details are in the server log)", code.Title(), requestID)
}
