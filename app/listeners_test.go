package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

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
	assert.Check(t, strings.Contains(body, `lancecat_http_request_duration_seconds_count{code="200",operation="/healthz"} 1`), body)
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
