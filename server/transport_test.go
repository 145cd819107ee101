package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/internal/testenv"
)

// serveForTest serves opts on a loopback port (real connections: read deadlines apply) until the
// test ends, and returns the base URL.
func serveForTest(t *testing.T, opts Options) string {
	t.Helper()
	if opts.Handlers == nil {
		opts.Handlers = handlers.New(handlers.Options{})
	}
	s, err := New(opts)
	assert.NilError(t, err)
	ready := make(chan net.Addr, 1)
	return testenv.Serve(t, ready, func(ctx context.Context) error {
		err := s.ListenAndServe(ctx, "127.0.0.1:0", 5*time.Second, ready)
		if ctx.Err() != nil {
			return nil // stopped by the test's end: a shutdown cut short by a slow body is no failure
		}
		return err
	})
}

// slowBody is a client that declares a body of declared bytes and sends one byte every tick: the
// slow-body attack of issue 10 item 6.
type slowBody struct {
	conn   net.Conn
	status chan int // the answer's status, or -1 when the connection ended without one
}

func startSlowBody(t *testing.T, base, path string, declared int, tick time.Duration) *slowBody {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	assert.NilError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: lancecat\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, declared)
	assert.NilError(t, err)
	sb := &slowBody{conn: conn, status: make(chan int, 1)}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(tick):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	go func() {
		defer close(stop)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			sb.status <- -1
			return
		}
		resp.Body.Close()
		sb.status <- resp.StatusCode
	}()
	return sb
}

func post(t *testing.T, url, body string) (int, nserr.Problem, http.Header) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	assert.NilError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	var p nserr.Problem
	if resp.StatusCode >= 400 {
		assert.NilError(t, json.Unmarshal(raw, &p), string(raw))
	}
	return resp.StatusCode, p, resp.Header
}

// TestSlowBodiesHoldNoWriteSlot: clients that declare a body and trickle it used to hold every
// write slot (a write slot was taken before the handler read the body, and no deadline bounded the
// read), so every other write got 429 code 21. Now the body is read before a slot is taken, under a
// deadline: the slow clients cost only their own connections and are cut with 408.
func TestSlowBodiesHoldNoWriteSlot(t *testing.T) {
	const timeout = 500 * time.Millisecond
	base := serveForTest(t, Options{MaxConcurrentWrites: 2, ReadBodyTimeout: timeout, MinBodyRate: 1 << 30})
	start := time.Now()
	var slow []*slowBody
	for i := range 6 { // three times the slots
		slow = append(slow, startSlowBody(t, base, fmt.Sprintf("/v1/namespace/slow%d/create", i), 100000, 20*time.Millisecond))
	}
	time.Sleep(100 * time.Millisecond) // the slow requests are in flight
	for i := range 3 {
		status, p, _ := post(t, base+fmt.Sprintf("/v1/namespace/ok%d/create", i), `{}`)
		// No catalog behind the handlers: a write that got through answers 406 code 0.
		assert.Equal(t, status, http.StatusNotAcceptable, "write %d: %+v", i, p)
	}
	for i, sb := range slow {
		select {
		case status := <-sb.status:
			assert.Assert(t, status == http.StatusRequestTimeout || status == -1, "slow client %d: %d", i, status)
		case <-time.After(10 * timeout):
			t.Fatalf("slow client %d was not cut", i)
		}
	}
	assert.Assert(t, time.Since(start) < 10*timeout)
}

// TestFastLargeBodyGetsItsTime: the deadline grows with the bytes received, so a large upload at
// the minimum rate is not cut by the base timeout.
func TestFastLargeBodyGetsItsTime(t *testing.T) {
	base := serveForTest(t, Options{ReadBodyTimeout: 300 * time.Millisecond, MinBodyRate: 1000})
	pr, pw := io.Pipe()
	go func() {
		// 1200 bytes over ~600 ms at 2000 B/s: twice the base timeout, within the rate allowance.
		_, _ = pw.Write([]byte(`{"properties":{"k":"`))
		for range 30 {
			time.Sleep(20 * time.Millisecond)
			_, _ = pw.Write([]byte(strings.Repeat("v", 40)))
		}
		_, _ = pw.Write([]byte(`"}}`))
		pw.Close()
	}()
	resp, err := http.Post(base+"/v1/namespace/big/create", "application/json", pr)
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusNotAcceptable)
}

// TestJSONBodyCap: JSON bodies used to be buffered up to --max-body-bytes (256 MiB), so a few
// concurrent bodies of whitespace took gigabytes. Every body of an operation that does not take
// Arrow IPC now has the JSON cap, declared or chunked; Arrow uploads keep the large limit.
func TestJSONBodyCap(t *testing.T) {
	s, err := New(Options{Handlers: handlers.New(handlers.Options{}), MaxBodyBytes: 1 << 20, MaxJSONBodyBytes: 1024})
	assert.NilError(t, err)
	h := s.Handler()
	big := `{"properties":{"k":"` + strings.Repeat(" ", 2000) + `"}}`
	for _, tc := range []struct {
		name        string
		target      string
		contentType string
		chunked     bool
		want413     bool
	}{
		{"json declared", "/v1/namespace/ns/describe", "application/json", false, true},
		{"json chunked", "/v1/namespace/ns/describe", "application/json", true, true},
		// The cap goes by operation, not by what the client calls its body.
		{"json op sent as arrow", "/v1/namespace/ns/create", handlers.ArrowStreamType, false, true},
		{"json op without content type", "/v1/namespace/ns/create", "", true, true},
		{"control op", "/v1/projects", "application/json", false, true},
		{"arrow insert", "/v1/table/ns$t/insert", handlers.ArrowStreamType, false, false},
		{"arrow create chunked", "/v1/table/ns$t/create", handlers.ArrowStreamType, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", tc.target, strings.NewReader(big))
			if tc.chunked {
				req.Body = io.NopCloser(io.MultiReader(strings.NewReader(big)))
				req.ContentLength = -1
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tc.want413 {
				assert.Equal(t, rec.Code, http.StatusRequestEntityTooLarge, rec.Body.String())
				var p nserr.Problem
				assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				assert.Equal(t, p.Code, int(nserr.InvalidInput))
				return
			}
			assert.Assert(t, rec.Code != http.StatusRequestEntityTooLarge, rec.Body.String())
		})
	}
	// The JSON cap never exceeds --max-body-bytes.
	s, err = New(Options{Handlers: handlers.New(handlers.Options{}), MaxBodyBytes: 100})
	assert.NilError(t, err)
	assert.Equal(t, do(t, s.Handler(), "POST", "/v1/namespace/ns/describe", big, nil).status, http.StatusRequestEntityTooLarge)
}

// TestBufferedBodyBudget: the bytes all requests hold at once are bounded whatever the
// concurrency. Two slow uploads hold the whole budget; another body waits briefly, then gets 429
// code 21 with Retry-After; a request without a body is served; once the slow uploads are cut, the
// budget is free again.
func TestBufferedBodyBudget(t *testing.T) {
	const timeout = 500 * time.Millisecond
	base := serveForTest(t, Options{
		MaxBodyBytes: 2 * firstBodyChunk, MaxBufferedBodyBytes: 2 * firstBodyChunk, bodyBudgetWait: 50 * time.Millisecond,
		ReadBodyTimeout: timeout, MinBodyRate: 1 << 30,
	})
	var slow []*slowBody
	for i := range 2 {
		slow = append(slow, startSlowBody(t, base, fmt.Sprintf("/v1/namespace/s%d/describe", i), 100000, 20*time.Millisecond))
	}
	time.Sleep(100 * time.Millisecond)
	status, p, header := post(t, base+"/v1/namespace/ns/describe", `{}`)
	assert.Equal(t, status, http.StatusTooManyRequests)
	assert.Equal(t, p.Code, int(nserr.Throttling))
	assert.Equal(t, header.Get("Retry-After"), "1")

	resp, err := http.Get(base + "/healthz")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)

	for _, sb := range slow {
		<-sb.status
	}
	status, p, _ = post(t, base+"/v1/namespace/ns/describe", `{}`)
	assert.Equal(t, status, http.StatusNotAcceptable, "%+v", p)
}

// TestMetricLabelsAreBounded: every unknown method used to become its own `operation` label (2,000
// random 8 KB methods to /healthz grew /metrics to 291 MB). Labels now come only from the route
// table and the standard methods: 1,000 requests with random 8 KB methods add a handful of series
// and a few KB to /metrics, and no label value anywhere holds a method sent.
func TestMetricLabelsAreBounded(t *testing.T) {
	s := newTestServer(t, 0)
	h := s.Handler()
	scrape := func() string {
		rec := httptest.NewRecorder()
		s.OpsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		assert.Equal(t, rec.Code, http.StatusOK)
		return rec.Body.String()
	}
	before := len(scrape())
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.IntN(26)]
		}
		return string(b)
	}
	for range 200 {
		for _, target := range []string{"/healthz", "/metrics", "/v1/namespace/x/create", "/" + strings.ToLower(word(12)), "/v1/" + strings.ToLower(word(8)) + "/x"} {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			req.Method = word(8 << 10)
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	families, err := s.metrics.registry.Gather()
	assert.NilError(t, err)
	labels := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.Assert(t, len(l.GetValue()) < 100, "label %s holds %d bytes", l.GetName(), len(l.GetValue()))
				if l.GetName() == "operation" {
					labels[l.GetValue()] = true
				}
			}
		}
	}
	// "unrouted" and "OTHER <route>" for the routes hit (/metrics is not the API's: unrouted).
	assert.Assert(t, len(labels) <= 5, "%d operation labels", len(labels))
	for l := range labels {
		assert.Assert(t, l == "unrouted" || strings.HasPrefix(l, "OTHER /"), "label %q", l)
	}
	after := len(scrape())
	assert.Assert(t, after-before < 64<<10, "/metrics grew from %d to %d bytes", before, after)
}

// TestForwardedForOnlyFromTrustedProxies: X-Forwarded-For used to be believed from anyone (Echo's
// default trusts every loopback and private peer too), so any client wrote the log's `remote`.
func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	_, proxy, err := net.ParseCIDR("203.0.113.0/24")
	assert.NilError(t, err)
	for _, tc := range []struct {
		name    string
		trusted []*net.IPNet
		peer    string
		want    string
	}{
		{"no proxies configured", nil, "203.0.113.7:5000", "203.0.113.7"},
		{"loopback peer, no proxies", nil, "127.0.0.1:5000", "127.0.0.1"},
		{"private peer, no proxies", nil, "10.1.2.3:5000", "10.1.2.3"},
		{"trusted proxy", []*net.IPNet{proxy}, "203.0.113.7:5000", "198.51.100.9"},
		{"untrusted peer with proxies configured", []*net.IPNet{proxy}, "10.1.2.3:5000", "10.1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			s, err := New(Options{Handlers: handlers.New(handlers.Options{}), TrustedProxies: tc.trusted,
				Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			assert.NilError(t, err)
			req := httptest.NewRequest("GET", "/healthz", nil)
			req.RemoteAddr = tc.peer
			req.Header.Set("X-Forwarded-For", "198.51.100.9")
			req.Header.Set("X-Real-IP", "198.51.100.10")
			req.Header.Set("X-Request-Id", "rid-xff")
			s.Handler().ServeHTTP(httptest.NewRecorder(), req)
			assert.Equal(t, accessLine(t, logs, "rid-xff")["remote"], tc.want)
		})
	}
}

type stubKeys map[string]authz.Principal

func (k stubKeys) VerifyAPIKey(_ context.Context, key string) (authz.Principal, error) {
	if p, ok := k[key]; ok {
		return p, nil
	}
	return "", nserr.Unauthenticatedf("API key not accepted")
}

type refusingTokens struct{}

func (refusingTokens) VerifyToken(context.Context, string) (authz.Principal, error) {
	return "", nserr.Wrap(nserr.Unauthenticated, fmt.Errorf(`oidc: expected audience "secret-aud" got ["x"]`), "bearer token not accepted")
}

// TestLogLinesJoin: access lines carry the principal, lines logged deeper down with the request's
// context (the audit log) carry its request id, and a refused credential's reason is logged with
// the request id while the answer stays generic.
func TestLogLinesJoin(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	s, err := New(Options{Handlers: handlers.New(handlers.Options{}), Logger: logger,
		Authn: &authz.Authenticator{Enabled: true, APIKeys: stubKeys{"k-alice": authz.User("alice")}, Tokens: refusingTokens{}}})
	assert.NilError(t, err)
	// A door that writes an audit-style line the way the authorizer does: with the request context.
	audit := slog.New(requestIDHandler{logger.Handler()}).With(slog.String("log", "audit"))
	s.echo.GET("/v1/test/audited", func(c echo.Context) error {
		audit.LogAttrs(c.Request().Context(), slog.LevelInfo, "authorization decision", slog.String("decision", "ALLOW"))
		return c.JSON(http.StatusOK, map[string]string{})
	})
	h := s.Handler()
	a := do(t, h, "GET", "/v1/test/audited", "", map[string]string{"X-Api-Key": "k-alice", "X-Request-Id": "rid-alice"})
	assert.Equal(t, a.status, http.StatusOK)
	assert.Equal(t, accessLine(t, logs, "rid-alice")["principal"], "user:alice")
	var auditLine map[string]any
	for _, l := range logLines(t, logs) {
		if l["log"] == "audit" {
			auditLine = l
		}
	}
	assert.Assert(t, auditLine != nil)
	assert.Equal(t, auditLine["request_id"], "rid-alice")

	a = do(t, h, "POST", "/v1/namespace/list", `{}`, map[string]string{"Authorization": "Bearer x.y.z", "X-Request-Id": "rid-tok"})
	assert.Equal(t, a.status, http.StatusUnauthorized)
	assert.Assert(t, !strings.Contains(a.body, "secret-aud"), a.body)
	var refused map[string]any
	for _, l := range logLines(t, logs) {
		if l["msg"] == "authentication refused" && l["request_id"] == "rid-tok" {
			refused = l
		}
	}
	assert.Assert(t, refused != nil, logs.String())
	assert.Assert(t, strings.Contains(refused["reason"].(string), "secret-aud"))
}
