package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/gen/nsclient"
)

// TestClientIsFreeOfServerCode: other services import the client; it must not pull in Echo, the
// OpenAPI loader or any lancecat package but the generated clients.
func TestClientIsFreeOfServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lancecat/lancecat/client").CombinedOutput()
	assert.NilError(t, err, "%s", out)
	allowed := map[string]bool{
		"github.com/lancecat/lancecat/client":            true,
		"github.com/lancecat/lancecat/gen/nsclient":      true,
		"github.com/lancecat/lancecat/gen/controlclient": true,
	}
	for _, dep := range strings.Fields(string(out)) {
		assert.Assert(t, !strings.Contains(dep, "labstack/echo"), "the client depends on Echo (%s)", dep)
		assert.Assert(t, !strings.Contains(dep, "getkin/kin-openapi"), "the client depends on the OpenAPI loader (%s)", dep)
		if strings.HasPrefix(dep, "github.com/lancecat/lancecat") {
			assert.Assert(t, allowed[dep], "the client depends on lancecat's %s", dep)
		}
	}
}

// TestOptionsReachTheWire: the API key, the bearer token and the delimiter are on every spec
// request; a delimiter the caller gives explicitly wins.
func TestOptionsReachTheWire(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"tables":[]}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL+"/", client.Options{APIKey: "k1", BearerToken: "t1", Delimiter: "."})
	assert.NilError(t, err)
	assert.Equal(t, c.ID("a", "b"), "a.b")
	resp, err := c.Spec.ListTablesWithResponse(context.Background(), c.ID("a", "b"), nil)
	assert.NilError(t, client.Check(resp, err))
	assert.Equal(t, got.Header.Get("x-api-key"), "k1")
	assert.Equal(t, got.Header.Get("Authorization"), "Bearer t1")
	assert.Equal(t, got.URL.Query().Get("delimiter"), ".")
	assert.Equal(t, got.URL.EscapedPath(), "/v1/namespace/a.b/table/list")

	own := "$"
	resp, err = c.Spec.ListTablesWithResponse(context.Background(), "a$b", &nsclient.ListTablesParams{Delimiter: &own})
	assert.NilError(t, client.Check(resp, err))
	assert.Equal(t, got.URL.Query().Get("delimiter"), "$")
}

// TestRetries: 429 and 503 (refused without acting) are retried with the body replayed, up to
// Retries; other failures are not.
func TestRetries(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		retries int
		calls   int32
		ok      bool
	}{
		{"503 then success", http.StatusServiceUnavailable, 2, 3, true},
		{"429 then success", http.StatusTooManyRequests, 2, 3, true},
		{"out of retries", http.StatusServiceUnavailable, 1, 2, false},
		{"no retries by default", http.StatusServiceUnavailable, 0, 1, false},
		{"a 409 is an answer, not retried", http.StatusConflict, 3, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				assert.Equal(t, string(body), `{"id":["ns"]}`, "the body is replayed on every attempt")
				w.Header().Set("Content-Type", "application/problem+json")
				if calls.Add(1) <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, `{"code":17,"error":"busy","status":503}`)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{}`)
			}))
			defer srv.Close()
			c, err := client.New(srv.URL, client.Options{Retries: tc.retries, Backoff: time.Millisecond})
			assert.NilError(t, err)
			id := []string{"ns"}
			resp, err := c.Spec.CreateNamespaceWithResponse(context.Background(), "ns", nil, nsclient.CreateNamespaceRequest{Id: &id})
			err = client.Check(resp, err)
			assert.Equal(t, err == nil, tc.ok, "%v", err)
			assert.Equal(t, calls.Load(), tc.calls)
			if !tc.ok {
				var p *client.Problem
				assert.Assert(t, errors.As(err, &p))
				assert.Equal(t, p.Status, tc.status)
				assert.Equal(t, p.Code, 17)
			}
		})
	}
}

// TestCheck: a failed answer is a *Problem with the spec code, whatever its body.
func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		code   int
		msg    string
	}{
		{"a problem", 404, `{"type":"urn:lance-namespace:error:TableNotFound","status":404,"code":4,"error":"table x not found"}`, client.CodeTableNotFound, "table x not found"},
		{"code 0 is a code", 406, `{"code":0,"error":"unsupported"}`, client.CodeUnsupported, "unsupported"},
		{"no problem body, 4xx", 400, `bad`, client.CodeInvalidInput, "bad"},
		{"no problem body, 5xx", 502, `<html>gateway</html>`, client.CodeInternal, "<html>gateway</html>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := client.CheckHTTP(&http.Response{StatusCode: tc.status}, []byte(tc.body))
			var p *client.Problem
			assert.Assert(t, errors.As(err, &p), "%v", err)
			assert.Equal(t, p.Status, tc.status)
			assert.Equal(t, p.Code, tc.code)
			assert.Equal(t, p.Message, tc.msg)
		})
	}
	assert.NilError(t, client.CheckHTTP(&http.Response{StatusCode: 204}, nil))
	sentinel := errors.New("dial failed")
	assert.Equal(t, client.Check((*nsclient.DropTableResponse3)(nil), sentinel), sentinel)
	assert.ErrorContains(t, client.Check((*nsclient.DropTableResponse3)(nil), nil), "no response")
}

// TestCompositeMergeKeyOnTheWire: the client sends a composite merge_insert key as the spec
// 9a92264 says (`?on=a&on=b`), and lancecat decodes every key: a valid composite key reaches the
// operation (here: the table's namespace does not exist, 404 as the spec says, never 406), an empty
// one among them is refused before it. catalogtest's Data case upserts on a composite key over
// HTTP, value-checked.
func TestCompositeMergeKeyOnTheWire(t *testing.T) {
	var query string
	capture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	}))
	defer capture.Close()
	c, err := client.New(capture.URL, client.Options{})
	assert.NilError(t, err)
	resp, err := c.Spec.MergeInsertIntoTableWithBodyWithResponse(context.Background(), c.ID("ns", "t"),
		&nsclient.MergeInsertIntoTableParams{On: []string{"a", "b"}}, "application/vnd.apache.arrow.stream", strings.NewReader(""))
	assert.NilError(t, client.Check(resp, err))
	assert.Assert(t, strings.Contains(query, "on=a&on=b"), query)

	url, stop := startCatalog()
	defer stop()
	c, err = client.New(url, client.Options{})
	assert.NilError(t, err)
	for _, tc := range []struct {
		on   []string
		code int
	}{
		{[]string{"id"}, client.CodeNamespaceNotFound},
		{[]string{"a", "b"}, client.CodeNamespaceNotFound},
		{[]string{"a", ""}, client.CodeInvalidInput},
	} {
		resp, err := c.Spec.MergeInsertIntoTableWithBodyWithResponse(context.Background(), c.ID("ns", "t"),
			&nsclient.MergeInsertIntoTableParams{On: tc.on}, "application/vnd.apache.arrow.stream", strings.NewReader(""))
		var p *client.Problem
		assert.Assert(t, errors.As(client.Check(resp, err), &p), "on=%v", tc.on)
		assert.Equal(t, p.Code, tc.code, "on=%v: %s", tc.on, p.Message)
	}
}
