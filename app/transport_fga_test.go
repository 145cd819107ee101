package app

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/registry"
)

// TestAuditLinesJoinTheirRequest: with real OpenFGA, every audit line of a request carries its
// request id (they carried none), and its access line the principal, so an authorization decision
// can be joined with the request that caused it.
func TestAuditLinesJoinTheirRequest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Root = filepath.Join(t.TempDir(), "data")
	useOpenFGA(t, &cfg, "lancecat-audit")
	ctx := context.Background()
	bucket, _, err := OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(bucket)).Create(ctx, authz.User("alice"), "")
	assert.NilError(t, err)

	logs := &syncBuffer{}
	rctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(rctx, cfg, slog.New(slog.NewJSONHandler(logs, nil)), ready) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		assert.NilError(t, <-done)
	})

	req, err := http.NewRequest(http.MethodPost, "http://"+addr.String()+"/v1/namespace/ns1/create", strings.NewReader(`{}`))
	assert.NilError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", key)
	req.Header.Set("X-Request-Id", "rid-audit-1")
	res, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	res.Body.Close()
	assert.Equal(t, res.StatusCode, http.StatusOK)

	deadline := time.Now().Add(5 * time.Second)
	var audits int
	for {
		audits = 0
		for _, l := range logLines(t, logs) {
			if l["log"] == "audit" && l["request_id"] == "rid-audit-1" {
				audits++
			}
		}
		if audits > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.Assert(t, audits > 0, "no audit line carries the request id: %s", logs.String())
	assert.Equal(t, accessLine(t, logs, "rid-audit-1")["principal"], "user:alice")
}
