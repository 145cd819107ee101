package handlers

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// TestTableExistsAtVersion: table_exists with a version answers 200 for a version the table has
// and the spec's TableNotFound (404 code 4, naming the version) for one it lacks
// (catalog.TableExistsAt).
func TestTableExistsAtVersion(t *testing.T) {
	e, got, _, _ := indexTable(t)
	rec, err := post(e, got, "/v1/table/t/exists", `{"version": 1}`)
	assert.NilError(t, err)
	assert.Equal(t, rec.Code, http.StatusOK)
	_, err = post(e, got, "/v1/table/t/exists", `{"version": 99}`)
	assert.Equal(t, nserr.CodeOf(err), nserr.TableNotFound, "%v", err)
	assert.ErrorContains(t, err, "has no version 99")
	_, err = post(e, got, "/v1/table/t/exists", `{}`)
	assert.NilError(t, err)
}

// TestViewDoorsWithoutViews: handlers given no views service (Options.Views) answer the view
// doors and computed columns 406 naming the operation, after decoding the request.
func TestViewDoorsWithoutViews(t *testing.T) {
	e, got, _, _ := indexTable(t)
	for _, tc := range []struct{ path, body, op string }{
		{"/v1/materialized_view/mv/create", `{"kind": "query", "source_query": "SELECT id FROM t"}`, "CreateMaterializedView"},
		{"/v1/materialized_view/mv/refresh", `{}`, "RefreshMaterializedView"},
		{"/v1/table/t/add_columns", `{"new_columns": [{"name": "tri", "computed": "id * 3"}]}`, "AlterTableAddColumns"},
		{"/v1/table/t/backfill_column", `{"column": "tri"}`, "AlterTableBackfillColumns"},
	} {
		_, err := post(e, got, tc.path, tc.body)
		assert.Equal(t, nserr.CodeOf(err), nserr.Unsupported, "%s: %v", tc.path, err)
		assert.ErrorContains(t, err, tc.op)
	}
	_, err := post(e, got, "/v1/table/t/backfill_column", `{"column": "tri", "nope": 1}`)
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "a malformed request is told so first: %v", err)
}
