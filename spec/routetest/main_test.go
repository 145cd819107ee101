package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/spec"
)

// TestCommittedRouteTestIsGenerated: server/routes_gen_test.go is what the generator writes for
// the pinned spec (scripts/check-generated.sh checks the same through make generate).
func TestCommittedRouteTestIsGenerated(t *testing.T) {
	doc, err := nsapi.GetSpec()
	assert.NilError(t, err)
	pin := spec.LanceNamespace()
	src, err := Render(doc, pin)
	assert.NilError(t, err)
	committed, err := os.ReadFile(filepath.Join("..", "..", "server", "routes_gen_test.go"))
	assert.NilError(t, err)
	assert.Equal(t, string(committed), string(src), "run make generate")
	again, err := Render(doc, pin)
	assert.NilError(t, err)
	assert.Equal(t, string(again), string(src), "generation is deterministic")
	assert.Equal(t, strings.Count(string(src), "{ID: "), pin.Operations)
}

// TestRenderRefusesAnotherSpec: the route test is only written for the pinned spec.
func TestRenderRefusesAnotherSpec(t *testing.T) {
	doc, err := nsapi.GetSpec()
	assert.NilError(t, err)
	pin := spec.LanceNamespace()
	other := pin
	other.DocumentSHA256 = strings.Repeat("0", 64)
	_, err = Render(doc, other)
	assert.ErrorContains(t, err, "is not the pinned")
	fewer := pin
	fewer.Operations--
	_, err = Render(doc, fewer)
	assert.ErrorContains(t, err, "operations, the pin says")
}
