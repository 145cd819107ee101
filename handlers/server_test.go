package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// TestUnbackedDoorsDecodeFirst: a door no backend serves (the data-plane doors always, every door
// without a catalog) decodes its request first, so a malformed one is told what is wrong (400 code
// 13); only a well-formed one is answered Unsupported, naming the operation. A query flag a door
// checks before that answer (force) stays before it, one it checks after (purge) stays after.
func TestUnbackedDoorsDecodeFirst(t *testing.T) {
	cases := []struct {
		name, method, target, body string
		op                         string // "": the request is refused as invalid input
	}{
		{"data door, foreign body id", "POST", "/v1/table/a%24t/update", `{"id":["b","t"]}`, ""},
		{"data door", "POST", "/v1/table/a%24t/update", `{}`, "UpdateTable"},
		{"query door, null order_by", "POST", "/v1/table/a%24t/query", `{"order_by":null}`, ""},
		{"query door", "POST", "/v1/table/a%24t/query", `{"order_by":[]}`, "QueryTable"},
		{"insert, unknown mode", "POST", "/v1/table/a%24t/insert?mode=upsert", ``, ""},
		{"insert", "POST", "/v1/table/a%24t/insert?mode=append", ``, "InsertIntoTable"},
		{"merge_insert, empty match field", "POST", "/v1/table/a%24t/merge_insert?on=id&on=", ``, ""},
		{"merge_insert", "POST", "/v1/table/a%24t/merge_insert?on=id", ``, "MergeInsertIntoTable"},
		{"batch door, foreign delimiter", "POST", "/v1/table/batch-commit?delimiter=.", `{}`, ""},
		{"batch door, bad JSON", "POST", "/v1/table/batch-commit", `{`, ""},
		{"batch door", "POST", "/v1/table/batch-commit", `{}`, "BatchCommitTables"},
		{"no-body door, foreign body id", "POST", "/v1/table/a%24t/index/i/drop", `{"id":["b"]}`, ""},
		{"no-body door", "POST", "/v1/table/a%24t/index/i/drop", `null`, "DropTableIndex"},
		{"per-table door, foreign delimiter", "POST", "/v1/table/a%24t/tags/list?delimiter=.", ``, ""},
		{"per-table door", "POST", "/v1/table/a%24t/tags/list", ``, "ListTableTags"},
		{"namespace door, bad mode", "POST", "/v1/namespace/a/create", `{"mode":"maybe"}`, ""},
		{"namespace door", "POST", "/v1/namespace/a/create", `{"mode":"exist_ok"}`, "CreateNamespace"},
		{"force is checked before the 406", "POST", "/v1/table/a%24t/drop?force=maybe", ``, ""},
		{"purge is checked after the 406", "POST", "/v1/table/a%24t/drop?purge=maybe", ``, "DropTable"},
		{"listing, foreign delimiter", "GET", "/v1/table?delimiter=.", ``, ""},
		{"listing", "GET", "/v1/table", ``, "ListAllTables"},
	}
	e := echo.New()
	var got error
	e.HTTPErrorHandler = func(err error, _ echo.Context) { got = err }
	New(Options{}).Register(e)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.target, strings.NewReader(c.body)))
			if c.op == "" {
				assert.Assert(t, nserr.Is(got, nserr.ErrInvalidInput), "%v", got)
				return
			}
			assert.Assert(t, nserr.Is(got, nserr.ErrUnsupported), "%v", got)
			assert.Assert(t, strings.Contains(got.Error(), "operation "+c.op+" ("+c.method+" /v1/"), got.Error())
		})
	}
}
