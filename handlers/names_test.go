package handlers

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// hostileNames are the names issue 29 item 5 found accepted as index names ("listed, and
// /index/%00/stats reaches the NUL-named one"), and their kin.
var hostileNames = []string{
	"\x00", "a\nb", "a/b", `a\b`, ".", "..", " ", "  ", " lead", "trail ", "_rowid", "_ROWADDR",
	"_distance", "_score", "main", strings.Repeat("x", 251), "a\u200bb", "<script>", "a\ue000b",
}

// TestNamesFollowOneRule: an index, tag or branch name that breaks the rule (ident.CheckName) is
// a 400 code 13 naming the rule on every door that creates one, and on the path doors of an
// index that does not exist; nothing is created.
func TestNamesFollowOneRule(t *testing.T) {
	e, got, ns, _ := indexTable(t)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, name := range append([]string{""}, hostileNames...) {
		for _, c := range []struct{ target, body, kind string }{
			{"/v1/table/t/create_index", `{"column":"id","index_type":"BTREE","name":` + q(name) + `}`, "index name"},
			{"/v1/table/t/create_scalar_index", `{"column":"id","index_type":"BTREE","name":` + q(name) + `}`, "index name"},
			{"/v1/table/t/tags/create", `{"tag":` + q(name) + `,"version":1}`, "tag name"},
			{"/v1/table/t/branches/create", `{"name":` + q(name) + `}`, "branch name"},
		} {
			if name == "a/b" && c.kind == "branch name" {
				continue // a branch's segments, as in Lance
			}
			_, err := post(e, got, c.target, c.body)
			assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput), "%s %+q: %v", c.target, name, err)
			assert.Check(t, is.ErrorContains(err, c.kind), "%s %+q", c.target, name)
		}
		if name == "" {
			continue // no path segment: no route
		}
		for _, door := range []string{"stats", "drop"} {
			target := "/v1/table/t/index/" + url.PathEscape(name) + "/" + door
			_, err := post(e, got, target, `{}`)
			assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput), "%s: %v", target, err)
			assert.Check(t, is.ErrorContains(err, "index name"), target)
		}
	}
	tbl, err := ns.LoadTable(context.Background(), ident.ID{"t"})
	assert.NilError(t, err)
	list, err := tbl.ListIndices(context.Background(), "", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Len(list, 0), "a refused name made an index")
	rec, err := post(e, got, "/v1/table/t/tags/list", ``)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(strings.TrimSpace(rec.Body.String()), `{"tags":{}}`))
	rec, err = post(e, got, "/v1/table/t/branches/list", ``)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(strings.TrimSpace(rec.Body.String()), `{"branches":{}}`))

	// Names within the rule work; markup characters are refused (ident.CheckName).
	for _, c := range []struct{ target, body string }{
		{"/v1/table/t/create_index", `{"column":"id","index_type":"BTREE","name":"id by-cat+1"}`},
		{"/v1/table/t/tags/create", `{"tag":"v1.0","version":1}`},
		{"/v1/table/t/branches/create", `{"name":"feature/x"}`},
	} {
		_, err := post(e, got, c.target, c.body)
		assert.Check(t, err, c.target)
	}
	_, err = post(e, got, "/v1/table/t/index/"+url.PathEscape("id by-cat+1")+"/stats", `{}`)
	assert.Check(t, err)
}

// TestOddIndexNamesMadeBefore: an index whose name breaks the rule, made before it (through the
// catalog, as older servers let the doors do), is still listed, described and dropped under
// that name.
func TestOddIndexNamesMadeBefore(t *testing.T) {
	ctx := context.Background()
	e, got, ns, _ := indexTable(t)
	tbl, err := ns.LoadTable(ctx, ident.ID{"t"})
	assert.NilError(t, err)
	for _, name := range []string{"\x00", "a/b", " ", "_rowid"} {
		_, err := tbl.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "id", IndexType: "BTREE", Name: name})
		assert.NilError(t, err, "%+q", name)
		rec, err := post(e, got, "/v1/table/t/index/list", `{}`)
		assert.NilError(t, err)
		assert.Check(t, is.Contains(rec.Body.String(), `"index_name":`+strings.ReplaceAll(mustJSON(name), `\u0000`, `\u0000`)), "%+q", name)
		rec, err = post(e, got, "/v1/table/t/index/"+url.PathEscape(name)+"/stats", `{}`)
		assert.NilError(t, err, "%+q", name)
		assert.Check(t, is.Contains(rec.Body.String(), `"index_type":"BTREE"`))
		_, err = post(e, got, "/v1/table/t/index/"+url.PathEscape(name)+"/drop", ``)
		assert.NilError(t, err, "%+q", name)
		// Gone, it is a name that breaks the rule again.
		_, err = post(e, got, "/v1/table/t/index/"+url.PathEscape(name)+"/stats", `{}`)
		assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput), "%+q: %v", name, err)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
