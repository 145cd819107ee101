package app

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
)

// TestSpecDoorsEmitEvents: every lifecycle change made through the Lance spec's doors is a
// control event, in the order it happened.
func TestSpecDoorsEmitEvents(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	spec := e.as(t, "")
	ctl, err := controlclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	ctx := context.Background()
	steps := []func() (int, []byte){
		func() (int, []byte) {
			r, err := spec.CreateNamespaceWithResponse(ctx, "a", nil, nsclient.CreateNamespaceRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.CreateNamespaceWithResponse(ctx, "a", nil, nsclient.CreateNamespaceRequest{Mode: ptr("ExistOk")})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.DeclareTableWithResponse(ctx, "a$t", nil, nsclient.DeclareTableRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.RenameTableWithResponse(ctx, "a$t", nil, nsclient.RenameTableRequest{NewTableName: "u"})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.DeregisterTableWithResponse(ctx, "a$u", nil, nsclient.DeregisterTableRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.DeclareTableWithResponse(ctx, "a$v", nil, nsclient.DeclareTableRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.DropTableWithResponse(ctx, "a$v", nil)
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		func() (int, []byte) {
			r, err := spec.DropNamespaceWithResponse(ctx, "a", nil, nsclient.DropNamespaceRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
	}
	for _, step := range steps {
		status, body := step()
		expect(t, status, body, 200, 0)
	}
	assert.DeepEqual(t, eventTypes(t, ctl), []string{
		"namespace_created", "table_declared", "table_renamed", "table_deregistered",
		"table_declared", "table_dropped", "namespace_dropped",
	})
}
