package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// wire sends requests to one server.
type wire struct {
	base      string
	header    http.Header
	delimiter string
	hc        *http.Client
	names     atomic.Int64 // makes every name of a run unique
}

// answer is what the server answered.
type answer struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
	err          error
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("%s %s: %v", a.method, a.path, a.err)
	}
	body := string(a.body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	if strings.Contains(a.header.Get("Content-Type"), "arrow") {
		body = fmt.Sprintf("(%d bytes of Arrow)", len(a.body))
	}
	return fmt.Sprintf("%s %s: %d %s", a.method, a.path, a.status, strings.TrimSpace(body))
}

// join is id as a route's {id}, escaped as a path segment (the root: the delimiter alone).
func (w *wire) join(id []string) string {
	if len(id) == 0 {
		return url.PathEscape(w.delimiter)
	}
	return url.PathEscape(strings.Join(id, w.delimiter))
}

func (w *wire) nsPath(id []string, action string) string {
	return "/v1/namespace/" + w.join(id) + "/" + action
}

func (w *wire) tablePath(id []string, action string) string {
	return "/v1/table/" + w.join(id) + "/" + action
}

// do sends body (JSON unless it is []byte, then an Arrow IPC stream; nil: no body) to path.
func (w *wire) do(ctx context.Context, method, path string, query url.Values, body any) answer {
	a := answer{method: method, path: path}
	var rd io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, contentType = bytes.NewReader(b), "application/vnd.apache.arrow.stream"
	case rawJSON:
		rd, contentType = strings.NewReader(string(b)), "application/json"
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			a.err = err
			return a
		}
		rd, contentType = bytes.NewReader(enc), "application/json"
	}
	if w.delimiter != "$" {
		if query == nil {
			query = url.Values{}
		}
		query.Set("delimiter", w.delimiter)
	}
	u := w.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		a.err = err
		return a
	}
	for k, vs := range w.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	defer resp.Body.Close()
	a.status, a.header = resp.StatusCode, resp.Header
	a.body, a.err = io.ReadAll(resp.Body)
	return a
}

// rawJSON is a request body sent as it is (malformed JSON on purpose).
type rawJSON string

// specStatus is the HTTP status each of the spec's error codes travels with (the spec's
// responses: 400 bad request, 401, 403, 404 not found, 406 unsupported, 409 conflict, 429, 500,
// 503).
var specStatus = map[int]int{
	0: 406, 1: 404, 2: 409, 3: 409, 4: 404, 5: 409, 6: 404, 7: 409, 8: 404, 9: 409, 10: 404,
	11: 404, 12: 404, 13: 400, 14: 409, 15: 403, 16: 401, 17: 503, 18: 500, 19: 409, 20: 400,
	21: 429, 22: 404, 23: 409,
}

// problem is the error body: the spec's ErrorResponse (code required) in an RFC 9457 problem.
type problem struct {
	Code   *int   `json:"code"`
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// T is what a check works with.
type T struct {
	ctx   context.Context
	w     *wire
	caps  *capabilities
	root  []string
	group string
}

// name is a fresh name for an object of this check.
func (t *T) name(what string) string {
	return fmt.Sprintf("%s_%s_%d", t.group, what, t.w.names.Add(1))
}

// id is name under the run's namespace.
func (t *T) id(names ...string) []string {
	return append(append([]string{}, t.root...), names...)
}

func (t *T) post(path string, body any) answer {
	return t.w.do(t.ctx, "POST", path, nil, body)
}

func (t *T) postQ(path string, q url.Values, body any) answer {
	return t.w.do(t.ctx, "POST", path, q, body)
}

func (t *T) get(path string, q url.Values) answer {
	return t.w.do(t.ctx, "GET", path, q, nil)
}

// ok checks a is a success (2xx) and decodes its JSON body into out (nil: do not decode).
func ok(a answer, out any) error {
	if a.err != nil {
		return a.err
	}
	if a.status < 200 || a.status > 299 {
		return fmt.Errorf("want success, got %s", a)
	}
	if out == nil || a.status == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("%s: the answer is not the spec's JSON: %v", a, err)
	}
	return nil
}

// fails checks a is the spec's error with code (any of codes), with the status the spec gives it
// and a JSON body holding the numeric code.
func fails(a answer, codes ...int) error {
	if a.err != nil {
		return a.err
	}
	var p problem
	if err := json.Unmarshal(a.body, &p); err != nil || p.Code == nil {
		return fmt.Errorf("want error code %v, got a body without a numeric code: %s", codes, a)
	}
	for _, c := range codes {
		if *p.Code == c {
			if want := specStatus[c]; a.status != want {
				return fmt.Errorf("code %d travels with status %d, got %s", c, want, a)
			}
			ct := a.header.Get("Content-Type")
			if !strings.Contains(ct, "json") {
				return fmt.Errorf("error body's content type %q is not JSON: %s", ct, a)
			}
			return nil
		}
	}
	return fmt.Errorf("want error code %v, got %s", codes, a)
}

// check is a condition with what failed it.
func expect(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// first is the first non-nil error.
func first(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// mkNamespace creates the namespace id (under the run's namespace) or fails.
func (t *T) mkNamespace(id []string) error {
	return ok(t.post(t.w.nsPath(id, "create"), map[string]any{}), nil)
}

// capabilities is what the server says it backs.
type capabilities struct {
	Server string `json:"server"`
	Spec   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"spec"`
	Operations []struct {
		ID     string  `json:"id"`
		Method string  `json:"method"`
		Path   string  `json:"path"`
		Backed bool    `json:"backed"`
		Reason *string `json:"reason"`
	} `json:"operations"`
	present  bool
	raw      answer
	unbacked map[string]string
}

func (c *capabilities) isUnbacked(op string) bool {
	_, ok := c.unbacked[op]
	return ok
}

func (c *capabilities) specName() string {
	if c.Spec.Name == "" {
		return ""
	}
	return c.Spec.Name + " " + c.Spec.Version
}

// readCapabilities reads GET /v1/capabilities; a server without it (404, 405, 501) backs
// everything as far as the suite knows.
func readCapabilities(ctx context.Context, w *wire) (*capabilities, error) {
	c := &capabilities{unbacked: map[string]string{}}
	a := w.do(ctx, "GET", "/v1/capabilities", nil, nil)
	c.raw = a
	if a.err != nil {
		return nil, fmt.Errorf("conformance: %s", a)
	}
	switch a.status {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("conformance: the server refused the credentials: %s", a)
	default:
		return c, nil
	}
	if err := json.Unmarshal(a.body, c); err != nil {
		return c, nil
	}
	c.present = true
	for _, op := range c.Operations {
		if !op.Backed {
			why := "the server's capabilities say so"
			if op.Reason != nil {
				why = *op.Reason
			}
			c.unbacked[op.ID] = why
		}
	}
	return c, nil
}
