package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// getH is a GET of target on h with headers: the status and body.
func getH(t *testing.T, h http.Handler, target string, header map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestMetricsAreNotOnTheAPIPort: with authorization on, GET /metrics on the API port answered
// every anonymous caller the server's metrics (every operation and error code served). Metrics and
// profiles are now only on the operations listener; the API port serves neither, to anyone, and
// its probes still answer without a credential.
func TestMetricsAreNotOnTheAPIPort(t *testing.T) {
	keys := authz.NewAPIKeys(registry.NewStore(storage.NewMemory()))
	s, err := New(Options{
		Handlers: handlers.New(handlers.Options{}),
		Control:  handlers.NewControl(handlers.Options{}),
		Authn:    &authz.Authenticator{Enabled: true, APIKeys: keys},
	})
	assert.NilError(t, err)
	key, _, err := keys.Create(t.Context(), authz.User("alice"), "test")
	assert.NilError(t, err)
	withKey := map[string]string{"x-api-key": key}
	api := s.Handler()

	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
		status, body := getH(t, api, path, nil)
		assert.Check(t, status == http.StatusUnauthorized || status == http.StatusNotFound, "%s anonymous: %d", path, status)
		assert.Check(t, !strings.Contains(body, "lancecat_http") && !strings.Contains(body, "go_goroutines"), "%s: %s", path, body)
		status, body = getH(t, api, path, withKey)
		assert.Check(t, status == http.StatusNotFound, "%s with a key: %d", path, status)
		assert.Check(t, !strings.Contains(body, "lancecat_http") && !strings.Contains(body, "go_goroutines"), "%s: %s", path, body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		status, _ := getH(t, api, path, nil)
		assert.Check(t, status == http.StatusOK, "%s: %d", path, status)
	}

	ops := s.OpsHandler()
	status, body := getH(t, ops, "/metrics", nil)
	assert.Equal(t, status, http.StatusOK)
	// The API requests above are counted; the scrapes themselves too (promhttp's own counter).
	assert.Check(t, strings.Contains(body, `lancecat_http_request_duration_seconds_count{operation="/healthz",status="200"} 1`), body)
	assert.Check(t, strings.Contains(body, "go_goroutines"), body)
	status, body = getH(t, ops, "/metrics", nil)
	assert.Equal(t, status, http.StatusOK)
	assert.Check(t, strings.Contains(body, `promhttp_metric_handler_requests_total{code="200"} 1`), body)
	status, body = getH(t, ops, "/debug/pprof/", nil)
	assert.Equal(t, status, http.StatusOK)
	assert.Check(t, strings.Contains(body, "goroutine"), body)
	status, _ = getH(t, ops, "/debug/pprof/goroutine?debug=1", nil)
	assert.Equal(t, status, http.StatusOK)
	// The process's arguments are not answered: a secret may have been passed as a flag.
	status, _ = getH(t, ops, "/debug/pprof/cmdline", nil)
	assert.Equal(t, status, http.StatusNotFound)
	status, _ = getH(t, ops, "/v1/namespace/%24/list", nil)
	assert.Equal(t, status, http.StatusNotFound)
}

// TestOperationsListener: `serve --metrics-addr` binds a listener of its own, serving /metrics
// and /debug/pprof/; the API port serves neither. Off by default (nothing else is bound).
func TestOperationsListener(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Root = t.TempDir()
	cfg.Listen, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	apiAddr, opsAddr := make(chan net.Addr, 1), make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- RunAddrs(ctx, cfg, nil, Addrs{API: apiAddr, Ops: opsAddr}) }()
	var api, ops string
	for api == "" || ops == "" {
		select {
		case a := <-apiAddr:
			api = "http://" + a.String()
		case a := <-opsAddr:
			ops = "http://" + a.String()
		case err := <-done:
			t.Fatalf("serve: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("not listening after 30s")
		}
	}
	fetch := func(url string) (int, string) {
		resp, err := http.Get(url)
		assert.NilError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		assert.NilError(t, err)
		return resp.StatusCode, string(b)
	}
	status, _ := fetch(api + "/healthz")
	assert.Equal(t, status, http.StatusOK)
	status, body := fetch(api + "/metrics")
	assert.Equal(t, status, http.StatusNotFound)
	assert.Check(t, !strings.Contains(body, "lancecat_http"), body)
	status, _ = fetch(api + "/debug/pprof/")
	assert.Equal(t, status, http.StatusNotFound)

	status, body = fetch(ops + "/metrics")
	assert.Equal(t, status, http.StatusOK)
	assert.Check(t, strings.Contains(body, `lancecat_http_request_duration_seconds_count{operation="/healthz",status="200"} 1`), body)
	status, _ = fetch(ops + "/debug/pprof/heap?debug=1")
	assert.Equal(t, status, http.StatusOK)

	cancel()
	assert.NilError(t, <-done)

	// A taken operations port fails the start, naming the setting.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer ln.Close()
	cfg.MetricsAddr = ln.Addr().String()
	err = Run(context.Background(), cfg, nil, nil)
	assert.ErrorContains(t, err, "--metrics-addr: listening on "+ln.Addr().String())
}

func TestMetricsAddrSetting(t *testing.T) {
	for _, tc := range []struct {
		addr, listen, errText string
	}{
		{addr: "", listen: "127.0.0.1:2333"},
		{addr: "127.0.0.1:9464", listen: "127.0.0.1:2333"},
		{addr: ":9464", listen: "127.0.0.1:2333"},
		{addr: "127.0.0.1:0", listen: "127.0.0.1:0"},
		{addr: "9464", listen: "127.0.0.1:2333", errText: "--metrics-addr \"9464\": want host:port"},
		{addr: "127.0.0.1:2333", listen: "127.0.0.1:2333", errText: "--metrics-addr must differ from --listen"},
	} {
		cfg := DefaultConfig()
		cfg.MetricsAddr, cfg.Listen = tc.addr, tc.listen
		err := cfg.Validate()
		if tc.errText == "" {
			assert.Check(t, err, tc.addr)
		} else {
			assert.Check(t, err != nil && strings.Contains(err.Error(), tc.errText), "%s: %v", tc.addr, err)
		}
	}
}
