package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/handlers"
)

// TestProbesOnTheOperationsListener: /healthz and /readyz answer on the operations listener
// exactly as on the API port (same body, same 503 when a dependency fails), so an orchestrator
// can probe a replica whose API port demands a client certificate (--tls-client-auth require).
func TestProbesOnTheOperationsListener(t *testing.T) {
	var down atomic.Bool
	s, err := New(Options{Handlers: handlers.New(handlers.Options{}), Ready: []ReadyCheck{{Name: "root", Check: func(context.Context) error {
		if down.Load() {
			return errors.New("bucket gone")
		}
		return nil
	}}}})
	assert.NilError(t, err)
	ops, api := s.OpsHandler(), s.Handler()

	status, body := getH(t, ops, "/healthz", nil)
	assert.Equal(t, status, http.StatusOK)
	assert.Equal(t, body, `{"status":"ok"}`+"\n")
	for _, h := range []http.Handler{ops, api} {
		status, body = getH(t, h, "/readyz", nil)
		assert.Equal(t, status, http.StatusOK)
		assert.Equal(t, body, `{"checks":{"root":"ok"},"ready":true}`+"\n")
	}
	down.Store(true)
	for _, h := range []http.Handler{ops, api} {
		status, body = getH(t, h, "/readyz", nil)
		assert.Equal(t, status, http.StatusServiceUnavailable)
		assert.Equal(t, body, `{"checks":{"root":"unavailable"},"ready":false}`+"\n")
	}
	rec := httptest.NewRecorder()
	ops.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/healthz", nil))
	assert.Equal(t, rec.Code, http.StatusMethodNotAllowed)
}
