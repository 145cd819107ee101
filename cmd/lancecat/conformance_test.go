package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/conformance"
)

// serveLancecat runs lancecat on a local root until the test ends.
func serveLancecat(t *testing.T) string {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "root")
	return serveConfig(t, cfg)
}

// TestConformanceCommand: `lancecat conformance --only namespaces,ids --json` against lancecat
// exits 0 with a JSON report holding only those groups' checks (and the cleanup), all passed;
// the table form names each check with its result.
func TestConformanceCommand(t *testing.T) {
	url := serveLancecat(t)
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"conformance", "--url", url, "--only", "namespaces,ids", "--json"}, &out, &errOut), 0, errOut.String())
	var rep conformance.Report
	assert.NilError(t, json.Unmarshal(out.Bytes(), &rep))
	assert.Check(t, rep.Failed == 0 && rep.Passed > 10, "%+v", rep)
	for _, r := range rep.Results {
		assert.Check(t, r.Group == "namespaces" || r.Group == "ids" || r.Group == "cleanup", "%+v", r)
	}

	out.Reset()
	errOut.Reset()
	assert.Equal(t, run([]string{"conformance", "--url", url, "--only", "tables", "--skip-op", "RenameTable"}, &out, &errOut), 0, errOut.String())
	assert.Check(t, is.Contains(out.String(), "GROUP"))
	assert.Check(t, is.Contains(out.String(), "SKIP    rename: the table moves"))
	assert.Check(t, is.Contains(out.String(), "RenameTable not backed: skipped by --skip-op"))
}

// TestConformanceCommandFails: against a server that breaks the contract, the command prints the
// failures and exits 1. The server is a fake on purpose (fault injection): it answers every
// request like lancecat would except that a missing table's describe is 500 code 18 and a
// duplicate namespace create succeeds.
func TestConformanceCommandFails(t *testing.T) {
	real := serveLancecat(t)
	var created atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/describe") && strings.Contains(r.URL.Path, "missing") && strings.HasPrefix(r.URL.Path, "/v1/table/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"code":18,"error":"broken on purpose"}`))
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, real+r.URL.RequestURI(), r.Body)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == 409 && strings.HasPrefix(r.URL.Path, "/v1/namespace/") && strings.HasSuffix(r.URL.Path, "/create") {
			created.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		_, _ = w.Write(buf.Bytes())
	}))
	t.Cleanup(proxy.Close)
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"conformance", "--url", proxy.URL, "--only", "namespaces,tables"}, &out, &errOut), 1)
	assert.Check(t, is.Contains(out.String(), "FAIL    a missing table: describe, exists, drop answer 404 code 4"))
	assert.Check(t, is.Contains(out.String(), "FAIL    create of an existing namespace is 409 code 2"))
	assert.Check(t, is.Contains(out.String(), "FAIL    8 concurrent creates of one namespace"))
	assert.Check(t, is.Contains(errOut.String(), "checks failed"))
	assert.Check(t, created.Load() > 0)
}
