package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// Code is a Lance Namespace error code: what a failed answer means, whatever its HTTP status.
type Code int

// The spec's 24 error codes (ErrorResponse.code, 0–23); lancecat answers every error with one.
const (
	CodeUnsupported              Code = 0
	CodeNamespaceNotFound        Code = 1
	CodeNamespaceAlreadyExists   Code = 2
	CodeNamespaceNotEmpty        Code = 3
	CodeTableNotFound            Code = 4
	CodeTableAlreadyExists       Code = 5
	CodeTableIndexNotFound       Code = 6
	CodeTableIndexAlreadyExists  Code = 7
	CodeTableTagNotFound         Code = 8
	CodeTableTagAlreadyExists    Code = 9
	CodeTransactionNotFound      Code = 10
	CodeTableVersionNotFound     Code = 11
	CodeTableColumnNotFound      Code = 12
	CodeInvalidInput             Code = 13
	CodeConcurrentModification   Code = 14
	CodePermissionDenied         Code = 15
	CodeUnauthenticated          Code = 16
	CodeServiceUnavailable       Code = 17
	CodeInternal                 Code = 18
	CodeInvalidTableState        Code = 19
	CodeTableSchemaValidation    Code = 20
	CodeThrottling               Code = 21
	CodeTableBranchNotFound      Code = 22
	CodeTableBranchAlreadyExists Code = 23
)

// Sentinels, one per code: errors.Is(err, ErrTableNotFound) is true of every *Problem with code 4,
// however it was wrapped.
var (
	ErrUnsupported              = &codeError{CodeUnsupported, "Unsupported"}
	ErrNamespaceNotFound        = &codeError{CodeNamespaceNotFound, "NamespaceNotFound"}
	ErrNamespaceAlreadyExists   = &codeError{CodeNamespaceAlreadyExists, "NamespaceAlreadyExists"}
	ErrNamespaceNotEmpty        = &codeError{CodeNamespaceNotEmpty, "NamespaceNotEmpty"}
	ErrTableNotFound            = &codeError{CodeTableNotFound, "TableNotFound"}
	ErrTableAlreadyExists       = &codeError{CodeTableAlreadyExists, "TableAlreadyExists"}
	ErrTableIndexNotFound       = &codeError{CodeTableIndexNotFound, "TableIndexNotFound"}
	ErrTableIndexAlreadyExists  = &codeError{CodeTableIndexAlreadyExists, "TableIndexAlreadyExists"}
	ErrTableTagNotFound         = &codeError{CodeTableTagNotFound, "TableTagNotFound"}
	ErrTableTagAlreadyExists    = &codeError{CodeTableTagAlreadyExists, "TableTagAlreadyExists"}
	ErrTransactionNotFound      = &codeError{CodeTransactionNotFound, "TransactionNotFound"}
	ErrTableVersionNotFound     = &codeError{CodeTableVersionNotFound, "TableVersionNotFound"}
	ErrTableColumnNotFound      = &codeError{CodeTableColumnNotFound, "TableColumnNotFound"}
	ErrInvalidInput             = &codeError{CodeInvalidInput, "InvalidInput"}
	ErrConcurrentModification   = &codeError{CodeConcurrentModification, "ConcurrentModification"}
	ErrPermissionDenied         = &codeError{CodePermissionDenied, "PermissionDenied"}
	ErrUnauthenticated          = &codeError{CodeUnauthenticated, "Unauthenticated"}
	ErrServiceUnavailable       = &codeError{CodeServiceUnavailable, "ServiceUnavailable"}
	ErrInternal                 = &codeError{CodeInternal, "Internal"}
	ErrInvalidTableState        = &codeError{CodeInvalidTableState, "InvalidTableState"}
	ErrTableSchemaValidation    = &codeError{CodeTableSchemaValidation, "TableSchemaValidationError"}
	ErrThrottling               = &codeError{CodeThrottling, "Throttling"}
	ErrTableBranchNotFound      = &codeError{CodeTableBranchNotFound, "TableBranchNotFound"}
	ErrTableBranchAlreadyExists = &codeError{CodeTableBranchAlreadyExists, "TableBranchAlreadyExists"}
)

// byCode is the sentinel of each code, indexed by it.
var byCode = [...]*codeError{
	ErrUnsupported, ErrNamespaceNotFound, ErrNamespaceAlreadyExists, ErrNamespaceNotEmpty,
	ErrTableNotFound, ErrTableAlreadyExists, ErrTableIndexNotFound, ErrTableIndexAlreadyExists,
	ErrTableTagNotFound, ErrTableTagAlreadyExists, ErrTransactionNotFound, ErrTableVersionNotFound,
	ErrTableColumnNotFound, ErrInvalidInput, ErrConcurrentModification, ErrPermissionDenied,
	ErrUnauthenticated, ErrServiceUnavailable, ErrInternal, ErrInvalidTableState,
	ErrTableSchemaValidation, ErrThrottling, ErrTableBranchNotFound, ErrTableBranchAlreadyExists,
}

// Codes lists the spec's codes in order.
func Codes() []Code {
	out := make([]Code, len(byCode))
	for i, s := range byCode {
		out[i] = s.code
	}
	return out
}

// Err is the sentinel of c (nil for a code outside the spec).
func (c Code) Err() error {
	if c < 0 || int(c) >= len(byCode) {
		return nil
	}
	return byCode[c]
}

// String is the code's name as the spec spells it, e.g. "TableNotFound".
func (c Code) String() string {
	if c < 0 || int(c) >= len(byCode) {
		return "Code(" + strconv.Itoa(int(c)) + ")"
	}
	return byCode[c].name
}

type codeError struct {
	code Code
	name string
}

func (e *codeError) Error() string { return "lancecat: " + e.name }

// Problem is a failed answer: the RFC 9457 body lancecat sends, with the spec's `code`, and the
// HTTP status it came with. It unwraps to its code's sentinel.
type Problem struct {
	Status    int    `json:"status"`
	Code      Code   `json:"code"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Message   string `json:"error"`
	Detail    string `json:"detail"`
	Instance  string `json:"instance,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Context is the spec's ErrorResponse.context. lancecat sets "committed": "true" on the answer
	// of an operation that committed but whose follow-up failed: it must not be sent again.
	Context map[string]string `json:"context,omitempty"`
}

func (p *Problem) Error() string {
	msg := p.Message
	if msg == "" {
		msg = p.Detail
	}
	if msg == "" {
		msg = p.Title
	}
	return fmt.Sprintf("lancecat: %d %s (code %d): %s", p.Status, p.Code, int(p.Code), msg)
}

// Unwrap is the code's sentinel, so errors.Is(err, ErrTableNotFound) works.
func (p *Problem) Unwrap() error { return p.Code.Err() }

// Committed reports whether the server says the operation took effect despite the error.
func (p *Problem) Committed() bool { return p.Context["committed"] == "true" }

// Temporary reports whether the server refused the request without acting on it and asks for it
// again later: 503 ServiceUnavailable ("the client should wait and retry", the spec says) and 429
// Throttling. These are what WithRetries sends again.
func (p *Problem) Temporary() bool {
	return !p.Committed() && (p.Status == http.StatusServiceUnavailable || p.Status == http.StatusTooManyRequests)
}

// Check is the outcome of a generated call (pass its response and error as they come): err when
// the request could not be made, nil for a successful answer (2xx), and a *Problem for any other.
func Check(resp any, err error) error {
	if err != nil {
		return err
	}
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return errors.New("lancecat: no response")
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("lancecat: %T is not a generated response", resp)
	}
	var hr *http.Response
	var body []byte
	if f := v.FieldByName("HTTPResponse"); f.IsValid() {
		hr, _ = f.Interface().(*http.Response)
	}
	if f := v.FieldByName("Body"); f.IsValid() {
		body, _ = f.Interface().([]byte)
	}
	return CheckHTTP(hr, body)
}

// CheckHTTP is Check on a plain HTTP answer and its body: nil for 2xx, else a *Problem. A body
// that is no problem (a proxy's page) still gives its status, with the code the status means.
func CheckHTTP(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("lancecat: no response")
	}
	if resp.StatusCode < 300 {
		return nil
	}
	p := &Problem{Code: -1}
	if json.Unmarshal(body, p) != nil || p.Code < 0 {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512] + "…"
		}
		p = &Problem{Code: codeOfStatus(resp.StatusCode), Message: msg}
	}
	p.Status = resp.StatusCode
	return p
}

// codeOfStatus is the spec's closest code for a status that came without a problem body, as the
// server's own translator picks for transport failures.
func codeOfStatus(status int) Code {
	switch status {
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusTooManyRequests:
		return CodeThrottling
	case http.StatusServiceUnavailable:
		return CodeServiceUnavailable
	case http.StatusNotAcceptable:
		return CodeUnsupported
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeInvalidInput
}
