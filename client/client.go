// Package client is how other Go services call a lancecat catalog: the typed client of the
// Lance Namespace spec (gen/nsclient) and of lancecat's control plane (gen/controlclient), set up
// with what a service needs (base URL, API key or bearer token, the id delimiter, retries), and
// failed answers as a typed *Problem carrying the spec's error code.
//
// It imports no Echo and no server code (TestClientIsFreeOfServerCode):
//
//	c, err := client.New("http://catalog:2333", client.Options{APIKey: key, Retries: 3})
//	resp, err := c.Spec.DescribeTableWithResponse(ctx, c.ID("prod", "items"), nil, nsclient.DescribeTableRequest{})
//	if err := client.Check(resp, err); err != nil {
//		var p *client.Problem
//		if errors.As(err, &p) && p.Code == client.CodeTableNotFound { … }
//	}
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/gen/controlclient"
	"github.com/lancecat/lancecat/gen/nsclient"
)

// DefaultDelimiter joins the parts of an object id in a route's {id} unless Options says otherwise.
const DefaultDelimiter = "$"

// Options configure a Client. The zero value talks to an open catalog with the default delimiter
// and no retries.
type Options struct {
	// APIKey is sent as `x-api-key`; BearerToken as `Authorization: Bearer …` (an OIDC token).
	APIKey      string
	BearerToken string
	// Delimiter joins id parts (ID) and is sent as `?delimiter=` on every spec request; it must be
	// the server's (`--delimiter`), which refuses any other. Empty: DefaultDelimiter.
	Delimiter string
	// Retries is how many times a request the server refused without acting on it (429, 503) or
	// that never reached it (the connection could not be made) is sent again, waiting Backoff,
	// doubled each time, or what the answer's Retry-After asks. 0: never.
	Retries int
	Backoff time.Duration // default 200ms
	// HTTPClient sends the requests; nil: http.DefaultClient.
	HTTPClient *http.Client
}

// Client calls one catalog.
type Client struct {
	// Spec is the Lance Namespace REST spec's typed client; Control is lancecat's control plane.
	Spec      *nsclient.ClientWithResponses
	Control   *controlclient.ClientWithResponses
	delimiter string
}

// New is a client of the catalog at baseURL (e.g. "http://127.0.0.1:2333").
func New(baseURL string, opts Options) (*Client, error) {
	if opts.Delimiter == "" {
		opts.Delimiter = DefaultDelimiter
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 200 * time.Millisecond
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	doer := &retrying{client: hc, retries: opts.Retries, backoff: opts.Backoff}
	auth := func(_ context.Context, req *http.Request) error {
		if opts.APIKey != "" {
			req.Header.Set("x-api-key", opts.APIKey)
		}
		if opts.BearerToken != "" {
			req.Header.Set("Authorization", "Bearer "+opts.BearerToken)
		}
		return nil
	}
	delimiter := func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		if q.Get("delimiter") == "" {
			q.Set("delimiter", opts.Delimiter)
			req.URL.RawQuery = q.Encode()
		}
		return nil
	}
	base := strings.TrimSuffix(baseURL, "/")
	spec, err := nsclient.NewClientWithResponses(base, nsclient.WithHTTPClient(doer),
		nsclient.WithRequestEditorFn(auth), nsclient.WithRequestEditorFn(delimiter))
	if err != nil {
		return nil, err
	}
	control, err := controlclient.NewClientWithResponses(base, controlclient.WithHTTPClient(doer),
		controlclient.WithRequestEditorFn(auth))
	if err != nil {
		return nil, err
	}
	return &Client{Spec: spec, Control: control, delimiter: opts.Delimiter}, nil
}

// ID is an object id as a spec route's {id}: its parts joined by the delimiter (the root
// namespace is ID()).
func (c *Client) ID(parts ...string) string {
	return strings.Join(parts, c.delimiter)
}

// Delimiter is the delimiter the client joins ids with.
func (c *Client) Delimiter() string { return c.delimiter }

// The spec's error codes (its 24, 0–23; lancecat answers every error with one).
const (
	CodeUnsupported              = 0
	CodeNamespaceNotFound        = 1
	CodeNamespaceAlreadyExists   = 2
	CodeNamespaceNotEmpty        = 3
	CodeTableNotFound            = 4
	CodeTableAlreadyExists       = 5
	CodeTableIndexNotFound       = 6
	CodeTableIndexAlreadyExists  = 7
	CodeTableTagNotFound         = 8
	CodeTableTagAlreadyExists    = 9
	CodeTransactionNotFound      = 10
	CodeTableVersionNotFound     = 11
	CodeTableColumnNotFound      = 12
	CodeInvalidInput             = 13
	CodeConcurrentModification   = 14
	CodePermissionDenied         = 15
	CodeUnauthenticated          = 16
	CodeServiceUnavailable       = 17
	CodeInternal                 = 18
	CodeInvalidTableState        = 19
	CodeTableSchemaValidation    = 20
	CodeThrottling               = 21
	CodeTableBranchNotFound      = 22
	CodeTableBranchAlreadyExists = 23
)

// Problem is a failed answer: the RFC 9457 body lancecat sends, with the spec's `code`.
type Problem struct {
	Status    int    `json:"status"`
	Code      int    `json:"code"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Message   string `json:"error"`
	Detail    string `json:"detail"`
	Instance  string `json:"instance,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

func (p *Problem) Error() string {
	msg := p.Message
	if msg == "" {
		msg = p.Detail
	}
	return fmt.Sprintf("lancecat: %d (code %d): %s", p.Status, p.Code, msg)
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

// CheckHTTP is Check on a plain HTTP answer and its body: nil for 2xx, else a *Problem (a body
// that is no problem still gives its status, with code CodeInternal for a 5xx and
// CodeInvalidInput otherwise).
func CheckHTTP(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("lancecat: no response")
	}
	if resp.StatusCode < 300 {
		return nil
	}
	p := &Problem{Code: -1}
	if json.Unmarshal(body, p) != nil || p.Code < 0 {
		p = &Problem{Code: CodeInvalidInput, Message: strings.TrimSpace(string(body))}
		if resp.StatusCode >= 500 {
			p.Code = CodeInternal
		}
	}
	p.Status = resp.StatusCode
	return p
}

// retrying sends a request again when the server refused it without acting (429, 503) or the
// connection could not be made.
type retrying struct {
	client  *http.Client
	retries int
	backoff time.Duration
}

func (r *retrying) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && r.retries > 0 {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	wait := r.backoff
	for attempt := 0; ; attempt++ {
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := r.client.Do(req)
		if attempt >= r.retries || !retryable(resp, err) {
			return resp, err
		}
		if resp != nil {
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s >= 0 {
				wait = time.Duration(s) * time.Second
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func retryable(resp *http.Response, err error) bool {
	if err != nil {
		var op *net.OpError
		return errors.As(err, &op) && op.Op == "dial"
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
}
