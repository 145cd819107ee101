package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/control"
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
		Control:  control.New(control.Options{}),
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
	assert.Check(t, strings.Contains(body, `lancecat_http_request_duration_seconds_count{code="200",operation="/healthz"} 1`), body)
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
