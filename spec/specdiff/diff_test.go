package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gotest.tools/v3/assert"
)

// shared is where the Lance specs live: outside the repo, beside it.
const shared = "../../../shared/lance-namespace"

// TestReportOfTheFirstBump: the report of v0.11.1 → 9a92264 is exactly the reviewed one in
// testdata, which lists the changes the upstream notes (../shared/lance-namespace/README.md) give:
// merge_insert's `on` (parameter and request field) becomes an array, minItems 1, form, exploded;
// QueryTableRequest and AnalyzeTableQueryPlanRequest no longer require `vector` and gain order_by
// (QueryTableOrderBy added), ExplainTableQueryPlan inheriting through QueryTableRequest; the
// localhost server comes first. The specs are outside material: without ../shared the test skips.
func TestReportOfTheFirstBump(t *testing.T) {
	oldPath, newPath := filepath.Join(shared, "spec.yaml"), filepath.Join(shared, "spec-9a92264.yaml")
	for _, p := range []string{oldPath, newPath} {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			t.Skipf("%s is absent (no ../shared beside the repo): the bump's specs are outside material", p)
		}
	}
	got, err := run(oldPath, newPath, "v0.11.1", "9a92264", "../../handlers")
	assert.NilError(t, err)
	want, err := os.ReadFile("testdata/v0.11.1-to-9a92264.md")
	assert.NilError(t, err)
	assert.Equal(t, got, string(want), "regenerate with: go run ./spec/specdiff -old-label v0.11.1 -new-label 9a92264 %s %s > spec/specdiff/testdata/v0.11.1-to-9a92264.md, and review the diff", oldPath, newPath)

	// What the upstream notes list, line by line (so the golden file cannot drift from them).
	for _, line := range []string{
		"- parameter `on` (query): required, string (minLength 1) → required, array (minItems 1) of string (minLength 1), form style, exploded",
		"### `MergeInsertIntoTableRequest` (changed)",
		"- `on`: string (minLength 1) → array (minItems 1) of string (minLength 1)",
		"### `QueryTableRequest` (changed)",
		"### `AnalyzeTableQueryPlanRequest` (changed)",
		"- `vector` no longer required",
		"- `order_by` added: array of `QueryTableOrderBy`",
		"### `QueryTableOrderBy` (added)",
		"- `column_name`: string (minLength 1), required",
		"- `ascending`: boolean (default true)",
		"- `nulls_first`: boolean (default false)",
		"- schema `QueryTableRequest` (request via `ExplainTableQueryPlanRequest.query`) changed (see below)",
		"- added: `http://localhost:2333` (position 1)",
		"- Operations: 54 → 54 (0 added, 0 removed, 4 changed)",
		"| `handlers/table_data.go` | `AnalyzeTableQueryPlan`, `ExplainTableQueryPlan`, `MergeInsertIntoTable`, `QueryTable` |",
	} {
		assert.Assert(t, strings.Contains(got, line+"\n"), "the report must say: %s", line)
	}
	assert.Equal(t, strings.Count(got, "\n### "), 8, "4 operations and 4 schemas change, nothing else")
}

func loadSpec(t *testing.T, src string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	assert.NilError(t, err)
	return doc
}

const baseSpec = `
openapi: 3.1.1
info: {title: t, version: 1.0.0}
servers: [{url: "http://a"}]
paths:
  /v1/thing/{id}/describe:
    post:
      operationId: DescribeThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: delimiter, in: query, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/DescribeThingRequest"}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/DescribeThingResponse"}
  /v1/thing/{id}/drop:
    post:
      operationId: DropThing
      responses:
        "204": {description: gone}
components:
  schemas:
    DescribeThingRequest:
      type: object
      required: [id]
      properties:
        id: {type: array, items: {type: string}}
        mode: {type: string, enum: [a, b]}
    DescribeThingResponse:
      type: object
      properties:
        stats: {$ref: "#/components/schemas/Stats"}
    Stats:
      type: object
      properties:
        rows: {type: integer, format: int64}
`

// TestReportKinds: every kind of change the report promises, on a small spec: operations added
// and removed, parameters added and changed, required lists, enums, types, a schema reached only
// through a response, and the handler lookup.
func TestReportKinds(t *testing.T) {
	newSpec := strings.NewReplacer(
		`        - {name: delimiter, in: query, schema: {type: string}}`,
		`        - {name: delimiter, in: query, schema: {type: string}}
        - {name: branch, in: query, required: true, schema: {type: string}}`,
		`  /v1/thing/{id}/drop:
    post:
      operationId: DropThing`,
		`  /v1/thing/{id}/purge:
    post:
      operationId: PurgeThing`,
		`      required: [id]`, `      required: [id, mode]`,
		`enum: [a, b]`, `enum: [a, c]`,
		`rows: {type: integer, format: int64}`, `rows: {type: string}`,
		`servers: [{url: "http://a"}]`, `servers: [{url: "http://b"}, {url: "http://a"}]`,
	).Replace(baseSpec)
	handlers := map[string]string{"DescribeThing": "handlers/thing.go", "DropThing": "handlers/drop.go"}
	got := Report("old", "new", loadSpec(t, baseSpec), loadSpec(t, newSpec), func(op string) string { return handlers[op] })
	for _, line := range []string{
		"- Operations: 2 → 2 (1 added, 1 removed, 1 changed)",
		"- added: `http://b` (position 1)",
		"- `PurgeThing`: POST /v1/thing/{id}/purge (handler to write: a method `PurgeThing` of `handlers.Server`)",
		"- `DropThing`: POST /v1/thing/{id}/drop (handler: `handlers/drop.go`)",
		"### `DescribeThing`: POST /v1/thing/{id}/describe\n\nHandler: `handlers/thing.go`",
		"- parameter `branch` (query) added: required, string",
		"- schema `DescribeThingRequest` (request) changed (see below)",
		"- schema `Stats` (response via `DescribeThingResponse.stats`) changed (see below)",
		"- `mode` now required",
		"- `mode`: enum values added: \"c\"",
		"- `mode`: enum values removed: \"b\"",
		"- `rows`: integer (format int64) → string",
		"| `handlers/drop.go` | `DropThing` |",
		"| `handlers/thing.go` | `DescribeThing` |",
		"| (new) | `PurgeThing` |",
	} {
		assert.Assert(t, strings.Contains(got, line), "the report must say %q:\n%s", line, got)
	}
	assert.Assert(t, !strings.Contains(got, "DescribeThingResponse` (changed)"), "a response schema whose own fields are unchanged is not reported changed:\n%s", got)

	same := Report("a", "b", loadSpec(t, baseSpec), loadSpec(t, baseSpec), func(string) string { return "" })
	assert.Assert(t, strings.Contains(same, "No operation or schema changes."), same)
}

// TestHandlerIndex: operations map to the file of the handlers.Server method named after them.
func TestHandlerIndex(t *testing.T) {
	index, err := handlerIndex("../../handlers")
	assert.NilError(t, err)
	assert.Equal(t, index["MergeInsertIntoTable"], "handlers/table_data.go")
	assert.Equal(t, index["CreateNamespace"] != "", true)
	for op, file := range index {
		assert.Assert(t, !strings.HasSuffix(file, "_test.go"), "%s found in a test file %s", op, file)
	}
}
