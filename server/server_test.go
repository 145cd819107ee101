package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/control"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/handlers"
)

func newTestServerWithLog(t *testing.T, maxBody int64) (*Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	s, err := New(Options{
		Handlers:     handlers.New(handlers.Options{}),
		Control:      control.New(control.Options{}),
		MaxBodyBytes: maxBody,
		Logger:       slog.New(slog.NewJSONHandler(logs, nil)),
	})
	assert.NilError(t, err)
	return s, logs
}

func newTestServer(t *testing.T, maxBody int64) *Server {
	s, _ := newTestServerWithLog(t, maxBody)
	return s
}

type answer struct {
	status  int
	header  http.Header
	body    string
	problem nserr.Problem
}

func do(t *testing.T, h http.Handler, method, target, body string, header map[string]string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if rec.Code >= 400 {
		assert.Equal(t, rec.Header().Get("Content-Type"), nserr.ProblemContentType, "%s %s: %s", method, target, a.body)
		assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &a.problem), a.body)
		assert.Equal(t, a.problem.Status, rec.Code)
	}
	return a
}

// TestRequestConventions pins the wire conventions of the official Lance clients
// (../shared/reference/lancedb-namespace-client.md §1). Every operation is still unbacked, so a
// request that passes all checks answers 406 code 0, and one that fails a check 400 code 13.
func TestRequestConventions(t *testing.T) {
	h := newTestServer(t, 0).Handler()
	long := strings.Repeat("x", 256)
	cases := []struct {
		name   string
		method string
		target string
		body   string
		status int
		code   int
	}{
		{"root namespace is the delimiter", "GET", "/v1/namespace/%24/list?delimiter=%24", "", 406, 0},
		{"root namespace tables", "GET", "/v1/namespace/%24/table/list?limit=3&page_token=a", "", 406, 0},
		{"nested id", "POST", "/v1/namespace/prod%24team/create", `{"id":["prod","team"]}`, 406, 0},
		{"form decoding: plus is a space", "POST", "/v1/namespace/a+b%24%C3%BCx%25y/create", `{"id":["a b","üx%y"]}`, 406, 0},
		{"missing body id takes the path id", "POST", "/v1/namespace/prod/describe", `{}`, 406, 0},
		{"no body at all", "POST", "/v1/namespace/prod/describe", ``, 406, 0},
		{"null body (ListTableVersions)", "POST", "/v1/table/prod%24t/version/list?limit=1&descending=true", `null`, 406, 0},
		{"id body on a no-body op (DropTable)", "POST", "/v1/table/prod%24t/drop", `{"id":["prod","t"]}`, 406, 0},
		{"same delimiter", "POST", "/v1/namespace/prod/describe?delimiter=%24", `{}`, 406, 0},
		{"enum PascalCase", "POST", "/v1/namespace/prod/create", `{"mode":"ExistOk"}`, 406, 0},
		{"enum snake_case", "POST", "/v1/namespace/prod/create", `{"mode":"exist_ok"}`, 406, 0},
		{"enum upper", "POST", "/v1/namespace/prod/drop", `{"mode":"SKIP","behavior":"cascade"}`, 406, 0},
		{"enum in query", "POST", "/v1/table/prod%24t/insert?mode=OVERWRITE", ``, 406, 0},
		{"ListAllTables as the docs write it", "GET", "/v1/table/?limit=5", ``, 406, 0},
		{"trailing slash keeps escaping", "POST", "/v1/namespace/a%2Bb/create/", `{"id":["a+b"]}`, 406, 0},

		{"other delimiter", "POST", "/v1/namespace/prod/describe?delimiter=.", `{}`, 400, 13},
		{"an unknown body field is refused (issue 29)", "POST", "/v1/namespace/prod/describe", `{"id":["prod"],"future":1}`, 400, 13},
		{"body id disagrees", "POST", "/v1/namespace/a+b/describe", `{"id":["a+b"]}`, 400, 13},
		{"body id longer", "POST", "/v1/namespace/a/describe", `{"id":["a","b"]}`, 400, 13},
		{"delimiter inside a body name", "POST", "/v1/table/a%24t%241/describe", `{"id":["a","t$1"]}`, 400, 13},
		{"unknown enum", "POST", "/v1/namespace/prod/create", `{"mode":"sometimes"}`, 400, 13},
		{"unknown query enum", "POST", "/v1/table/t/create?mode=append", ``, 400, 13},
		{"malformed JSON", "POST", "/v1/namespace/prod/describe", `{"id":`, 400, 13},
		{"wrong JSON type", "POST", "/v1/namespace/prod/describe", `{"id":"prod"}`, 400, 13},
		{"JSON array body", "POST", "/v1/namespace/prod/describe", `[1,2]`, 400, 13},
		{"dotdot segment", "POST", "/v1/namespace/..%24x/describe", ``, 400, 13},
		{"dot segment", "POST", "/v1/table/a%24./describe", ``, 400, 13},
		{"escaped slash", "POST", "/v1/table/a%2F..%2Fb/describe", ``, 400, 13},
		{"empty segment", "POST", "/v1/table/a%24%24b/describe", ``, 400, 13},
		{"trailing delimiter", "POST", "/v1/table/a%24/describe", ``, 400, 13},
		{"NUL", "POST", "/v1/table/a%00b/describe", ``, 400, 13},
		{"backslash", "POST", "/v1/table/a%5Cb/describe", ``, 400, 13},
		{"name over 255 bytes", "POST", "/v1/table/" + long + "/describe", ``, 400, 13},
		{"bad query type", "GET", "/v1/namespace/%24/list?limit=many", ``, 400, 13},

		{"unknown route", "GET", "/v1/nonexistent", ``, 404, 0},
		{"unknown action", "POST", "/v1/table/t/frobnicate", ``, 404, 0},
		{"wrong method", "PUT", "/v1/namespace/prod/describe", ``, 405, 0},
		{"GET on a POST op", "GET", "/v1/table/t/describe", ``, 405, 0},
		{"root of the API", "GET", "/", ``, 404, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, h, c.method, c.target, c.body, nil)
			assert.Equal(t, a.status, c.status, a.body)
			assert.Equal(t, a.problem.Code, c.code, a.body)
			assert.Equal(t, a.problem.Error, a.problem.Detail)
			assert.Assert(t, a.problem.Error != "")
			assert.Equal(t, a.problem.Type, nserr.TypeURI(nserr.Code(c.code)))
		})
	}
}

func TestBodyLimit(t *testing.T) {
	h := newTestServer(t, 64).Handler()
	big := `{"id":["prod"],"properties":{"k":"` + strings.Repeat("v", 100) + `"}}`
	t.Run("declared length", func(t *testing.T) {
		a := do(t, h, "POST", "/v1/namespace/prod/create", big, nil)
		assert.Equal(t, a.status, http.StatusRequestEntityTooLarge)
		assert.Equal(t, a.problem.Code, 13)
	})
	t.Run("chunked", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/v1/namespace/prod/create", io.MultiReader(strings.NewReader(big)))
		req.ContentLength = -1
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, rec.Code, http.StatusRequestEntityTooLarge, rec.Body.String())
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &p))
		assert.Equal(t, p.Code, 13)
	})
	t.Run("under the limit", func(t *testing.T) {
		a := do(t, h, "POST", "/v1/namespace/prod/create", `{"id":["prod"]}`, nil)
		assert.Equal(t, a.status, http.StatusNotAcceptable)
	})
}

func TestRequestID(t *testing.T) {
	h := newTestServer(t, 0).Handler()
	a := do(t, h, "POST", "/v1/namespace/prod/describe", `{}`, map[string]string{"X-Request-Id": "client-abc-1"})
	assert.Equal(t, a.header.Get("X-Request-Id"), "client-abc-1")
	assert.Equal(t, a.problem.RequestID, "client-abc-1")
	a = do(t, h, "POST", "/v1/namespace/prod/describe", `{}`, map[string]string{"X-Request-Id": "bad id\twith spaces"})
	assert.Assert(t, a.header.Get("X-Request-Id") != "bad id\twith spaces")
	assert.Equal(t, len(a.header.Get("X-Request-Id")), 32)
}

// TestUnknownErrorsAreRedacted: an error without a code is a 500 with code 18 whose detail hides
// the cause from the client, and the log has it in full beside the request id.
func TestUnknownErrorsAreRedacted(t *testing.T) {
	s, logs := newTestServerWithLog(t, 0)
	s.echo.POST("/v1/test/boom", func(echo.Context) error {
		return errors.New("password=hunter2 at /secret/path")
	})
	s.echo.POST("/v1/test/panicky-typed", func(echo.Context) error {
		return nserr.ServiceUnavailablef("openfga at 10.1.2.3:8081 refused: %w", errors.New("dial tcp"))
	})
	a := do(t, s.Handler(), "POST", "/v1/test/boom", ``, map[string]string{"X-Request-Id": "rid-42"})
	assert.Equal(t, a.status, 500)
	assert.Equal(t, a.problem.Code, 18)
	assert.Assert(t, !strings.Contains(a.body, "hunter2"), a.body)
	assert.Assert(t, strings.Contains(a.problem.Detail, "rid-42"))
	assert.Assert(t, strings.Contains(logs.String(), "hunter2"))
	assert.Assert(t, strings.Contains(logs.String(), `"request_id":"rid-42"`))

	a = do(t, s.Handler(), "POST", "/v1/test/panicky-typed", ``, nil)
	assert.Equal(t, a.status, 503)
	assert.Equal(t, a.problem.Code, 17)
	assert.Assert(t, !strings.Contains(a.body, "10.1.2.3"), a.body)
}

func TestAccessLogAndMetrics(t *testing.T) {
	s, logs := newTestServerWithLog(t, 0)
	h := s.Handler()
	do(t, h, "POST", "/v1/table/ns%24t/describe", `{}`, map[string]string{"X-Request-Id": "rid-7"})
	do(t, h, "POST", "/v1/table/ns%24%24t/describe", `{}`, nil)

	var line map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "rid-7") {
			assert.NilError(t, json.Unmarshal([]byte(l), &line))
		}
	}
	assert.Equal(t, line["operation"], "DescribeTable")
	assert.Equal(t, line["status"], float64(406))
	assert.Equal(t, line["code"], float64(0))
	assert.Equal(t, line["method"], "POST")
	// The duration is a duration (slog.Duration: nanoseconds in JSON), not a float of milliseconds.
	d, ok := line["duration"].(float64)
	assert.Assert(t, ok && d > 0 && d == float64(int64(d)), "duration: %v", line["duration"])
	_, old := line["duration_ms"]
	assert.Assert(t, !old, line)

	// `code` is the HTTP status (promhttp's convention), the spec's error code is error_code.
	m := do(t, s.OpsHandler(), "GET", "/metrics", ``, nil)
	assert.Equal(t, m.status, 200)
	for _, want := range []string{
		`lancecat_http_errors_total{code="406",error_code="0",operation="DescribeTable"} 1`,
		`lancecat_http_errors_total{code="400",error_code="13",operation="DescribeTable"} 1`,
		`lancecat_http_request_duration_seconds_count{code="406",operation="DescribeTable"} 1`,
		`lancecat_http_request_duration_seconds_count{code="400",operation="DescribeTable"} 1`,
		`lancecat_http_requests_total{code="406",operation="DescribeTable"} 1`,
		`lancecat_http_requests_total{code="400",operation="DescribeTable"} 1`,
		// Both answered: none in flight (the scrape is not a routed request).
		"lancecat_http_requests_in_flight 0",
	} {
		assert.Check(t, strings.Contains(m.body, want), "%s\n%s", want, m.body)
	}
	assert.Check(t, !strings.Contains(m.body, `status="`), m.body)
}

func TestHealthAndReadiness(t *testing.T) {
	failing := errors.New("bucket gone")
	var mu sync.Mutex
	var readyErr error
	s, err := New(Options{
		Handlers: handlers.New(handlers.Options{}),
		Ready: []ReadyCheck{{Name: "root", Check: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			return readyErr
		}}},
	})
	assert.NilError(t, err)
	h := s.Handler()
	assert.Equal(t, do(t, h, "GET", "/healthz", ``, nil).status, 200)
	a := do(t, h, "GET", "/readyz", ``, nil)
	assert.Equal(t, a.status, 200)
	assert.Equal(t, a.body, `{"checks":{"root":"ok"},"ready":true}`+"\n")
	mu.Lock()
	readyErr = failing
	mu.Unlock()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	assert.Equal(t, rec.Code, 503)
	assert.Equal(t, rec.Body.String(), `{"checks":{"root":"unavailable"},"ready":false}`+"\n")
}

// TestGracefulShutdown: a request in flight when the context ends still completes.
func TestGracefulShutdown(t *testing.T) {
	s := newTestServer(t, 0)
	release := make(chan struct{})
	s.echo.GET("/v1/test/slow", func(c echo.Context) error {
		<-release
		return c.JSON(200, map[string]string{})
	})
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", 10*time.Second, ready) }()
	addr := <-ready

	got := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + addr.String() + "/v1/test/slow")
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond) // let the request arrive before shutdown starts
	cancel()
	time.Sleep(100 * time.Millisecond)
	close(release)
	assert.Equal(t, <-got, 200)
	assert.NilError(t, <-done)
}
