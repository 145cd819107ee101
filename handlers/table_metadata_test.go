package handlers

import (
	"encoding/json"
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

// TestDescribeSaysDeclared: describe answers is_only_declared whether or not the client asked
// with check_declared (the state is read either way): true for a declared table, false for one
// with data — never null, which tells a client nobody checked.
func TestDescribeSaysDeclared(t *testing.T) {
	e, got, _, _ := indexTable(t)
	_, err := post(e, got, "/v1/table/d/declare", `{}`)
	assert.NilError(t, err)
	for _, tc := range []struct {
		target, body string
		want         bool
	}{
		{"/v1/table/d/describe", `{}`, true},
		{"/v1/table/d/describe", `{"check_declared": true}`, true},
		{"/v1/table/t/describe", `{}`, false},
		{"/v1/table/t/describe", `{"check_declared": true}`, false},
	} {
		rec, err := post(e, got, tc.target, tc.body)
		assert.NilError(t, err, tc.target)
		var out struct {
			IsOnlyDeclared *bool `json:"is_only_declared"`
		}
		assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		assert.Assert(t, out.IsOnlyDeclared != nil, "%s %s: %s", tc.target, tc.body, rec.Body.String())
		assert.Equal(t, *out.IsOnlyDeclared, tc.want, "%s %s", tc.target, tc.body)
	}
}
