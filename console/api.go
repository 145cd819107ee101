package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lancecat/lancecat/gen/controlapi"
)

// apiError is a door's refusal as the API answered it (its problem body), shown as is: the
// console adds nothing a client of the API would not learn.
type apiError struct {
	Status int
	Code   int
	Title  string
	Detail string
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%d %s", e.Status, e.Title)
	if e.Detail != "" && e.Detail != e.Title {
		msg += ": " + e.Detail
	}
	return msg
}

// recorder is the in-memory response of one in-process call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// call sends one request to a door through the router, as the session's caller, and returns the
// answer's body; a non-2xx answer is an *apiError. body is JSON-encoded (nil: no body).
func (c *Console) call(ctx context.Context, from *http.Request, s session, method, path string, body any) ([]byte, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("console: encoding the request to %s: %w", path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, fmt.Errorf("console: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "lancecat-console")
	switch {
	case s.apiKey != "":
		req.Header.Set("x-api-key", s.apiKey)
	case s.bearer != "":
		req.Header.Set("Authorization", "Bearer "+s.bearer)
	}
	// The access log names the browser's address, not the console's.
	req.RemoteAddr = from.RemoteAddr
	req.Host = from.Host
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status/100 != 2 {
		var p controlapi.Problem
		e := &apiError{Status: rec.status, Title: http.StatusText(rec.status)}
		if json.Unmarshal(rec.body.Bytes(), &p) == nil && p.Title != "" {
			e.Code, e.Title = p.Code, p.Title
			if p.Detail != nil {
				e.Detail = *p.Detail
			} else if p.Error != nil {
				e.Detail = *p.Error
			}
		}
		return nil, e
	}
	return rec.body.Bytes(), nil
}

// callJSON is call with the answer decoded into out.
func (c *Console) callJSON(ctx context.Context, from *http.Request, s session, method, path string, body, out any) error {
	b, err := c.call(ctx, from, s, method, path, body)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("console: decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// idPath is an id as a door path segment: parts joined by the delimiter, then escaped (the
// router matches the raw path, so a part holding '/' or '%' stays one segment).
func (c *Console) idPath(id []string) string {
	if len(id) == 0 {
		return url.PathEscape(c.delim) // the root namespace
	}
	return url.PathEscape(strings.Join(id, c.delim))
}

// splitID is an id from the console's own links (joined by the delimiter); the root is empty.
func (c *Console) splitID(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, c.delim)
}

// delimQuery is the delimiter parameter control doors take, when it is not the default.
func (c *Console) delimQuery(sep string) string {
	if c.delim == "$" {
		return ""
	}
	return sep + "delimiter=" + url.QueryEscape(c.delim)
}
