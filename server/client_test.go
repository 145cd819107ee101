package server

import (
	"context"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/nsclient"
)

// TestGeneratedClientReadsCodedProblems: the typed client other services import understands our
// problem bodies (problem+json is JSON to it) and the path id it encodes.
func TestGeneratedClientReadsCodedProblems(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, 0).Handler())
	defer srv.Close()
	client, err := nsclient.NewClientWithResponses(srv.URL)
	assert.NilError(t, err)
	ctx := context.Background()

	mode := "exist_ok"
	resp, err := client.CreateNamespaceWithResponse(ctx, "prod$team", nil, nsclient.CreateNamespaceRequest{
		Id: &[]string{"prod", "team"}, Mode: &mode,
	})
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode(), 406)
	assert.Assert(t, resp.JSON406 != nil, string(resp.Body))
	assert.Equal(t, resp.JSON406.Code, 0)

	resp, err = client.CreateNamespaceWithResponse(ctx, "prod", nil, nsclient.CreateNamespaceRequest{Id: &[]string{"other"}})
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode(), 400)
	assert.Assert(t, resp.JSON400 != nil, string(resp.Body))
	assert.Equal(t, resp.JSON400.Code, 13)
}
