package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// The route test of the Lance spec's operations is generated from the pin (routes_gen_test.go,
// spec/routetest); these are the assertions it does not make: our control API is routed, nothing
// else hides under the spec's prefixes, and every operation answers with a coded body.

// TestEveryControlOperationIsRouted: our own API is spec-first too.
func TestEveryControlOperationIsRouted(t *testing.T) {
	s := newTestServer(t, 0)
	routed := map[string]bool{}
	for _, r := range s.Routes() {
		routed[r.Method+" "+r.Path] = true
	}
	ops, err := ControlOperations()
	assert.NilError(t, err)
	assert.Assert(t, len(ops) > 0)
	underSpec := 0
	for _, op := range ops {
		key := op.Method + " " + op.EchoPath()
		assert.Assert(t, routed[key], "control operation %s (%s %s) is not routed", op.ID, op.Method, op.Path)
		for _, prefix := range SpecPrefixes {
			if strings.HasPrefix(op.Path, prefix+"/") {
				underSpec++
				assert.Assert(t, GovernanceRoutes[key], "%s (%s) is under %s: add it to GovernanceRoutes on purpose", op.ID, key, prefix)
			}
		}
	}
	assert.Equal(t, underSpec, len(GovernanceRoutes), "GovernanceRoutes lists a route no control operation has")
}

func TestNoUnlistedRoutesUnderSpecPrefixes(t *testing.T) {
	s := newTestServer(t, 0)
	ops, err := SpecOperations()
	assert.NilError(t, err)
	specRoutes := map[string]bool{}
	for _, op := range ops {
		specRoutes[op.Method+" "+op.EchoPath()] = true
	}
	for _, r := range s.Routes() {
		key := r.Method + " " + r.Path
		for _, prefix := range SpecPrefixes {
			if r.Path == prefix || strings.HasPrefix(r.Path, prefix+"/") {
				assert.Assert(t, specRoutes[key] || GovernanceRoutes[key],
					"%s is under the spec prefix %s but is neither a spec operation nor in GovernanceRoutes", key, prefix)
			}
		}
	}
}

// TestEveryOperationAnswers sends each of the 54 operations a well-formed request: each answers for
// real or with the spec's Unsupported (406, code 0) naming the operation, always with a coded body.
func TestEveryOperationAnswers(t *testing.T) {
	s := newTestServer(t, 0)
	ops, err := SpecOperations()
	assert.NilError(t, err)
	control, err := ControlOperations()
	assert.NilError(t, err)
	for _, op := range append(ops, control...) {
		t.Run(op.ID, func(t *testing.T) {
			path := strings.NewReplacer("{id}", "ns%24t", "{index_name}", "idx",
				"{project_id}", "p1", "{warehouse_id}", "w1").Replace(op.Path)
			target := path + "?delimiter=%24"
			if op.ID == "MergeInsertIntoTable" {
				target += "&on=id" // the one required query parameter in the spec
			}
			req := httptest.NewRequest(op.Method, target, nil)
			if op.Method != http.MethodGet {
				req = httptest.NewRequest(op.Method, target, strings.NewReader(`{}`))
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code < 300 {
				return // backed for real
			}
			assert.Equal(t, rec.Header().Get("Content-Type"), nserr.ProblemContentType)
			var p nserr.Problem
			assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &p), rec.Body.String())
			assert.Equal(t, rec.Code, http.StatusNotAcceptable, rec.Body.String())
			assert.Equal(t, p.Code, 0)
			assert.Assert(t, strings.Contains(p.Error, op.ID), "the problem must name the operation: %s", p.Error)
			assert.Assert(t, strings.Contains(p.Error, op.Path), "the problem must name the route: %s", p.Error)
		})
	}
}
