package console

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// sampleTree is project p > warehouse w > namespace a > (namespace a$b > table a$b$deep, table
// a$t), and the root with table top.
func sampleTree() *estateTree {
	t := &estateTree{}
	p := t.add(&treeRow{Kind: "project", Name: "p", parent: -1})
	w := t.add(&treeRow{Kind: "warehouse", Name: "w", parent: p, Depth: 1})
	a := t.add(&treeRow{Kind: "namespace", Name: "a", ID: []string{"a"}, parent: w, Depth: 2})
	ab := t.add(&treeRow{Kind: "namespace", Name: "b", ID: []string{"a", "b"}, parent: a, Depth: 3})
	t.add(&treeRow{Kind: "table", Name: "deep", ID: []string{"a", "b", "deep"}, parent: ab, Depth: 4})
	t.add(&treeRow{Kind: "table", Name: "t", ID: []string{"a", "t"}, parent: a, Depth: 3})
	r := t.add(&treeRow{Kind: "root", Name: "catalog root", parent: -1})
	t.add(&treeRow{Kind: "table", Name: "top", ID: []string{"top"}, parent: r, Depth: 1})
	return t
}

func names(rows []*treeRow) []string {
	var out []string
	for _, r := range rows {
		s := r.Kind + " " + r.Name
		if r.Match {
			s += " *"
		}
		out = append(out, s)
	}
	return out
}

func TestTreeSearch(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"", []string{"project p", "warehouse w", "namespace a", "namespace b", "table deep", "table t", "root catalog root", "table top"}},
		{"DEEP", []string{"project p", "warehouse w", "namespace a", "namespace b", "table deep *"}},
		{"b", []string{"project p", "warehouse w", "namespace a", "namespace b *", "table deep *"}}, // a.b.deep's id holds b
		{"top", []string{"root catalog root", "table top *"}},
		{"nothing", nil},
	} {
		t.Run(tc.q, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(names(sampleTree().search(tc.q)), tc.want))
		})
	}
}

func TestTreeBound(t *testing.T) {
	tr := &estateTree{}
	for i := range maxTreeNodes + 10 {
		tr.add(&treeRow{Kind: "table", Name: fmt.Sprint(i), parent: -1})
	}
	assert.Check(t, is.Len(tr.rows, maxTreeNodes))
	assert.Check(t, tr.cut)
}

func TestPaginate(t *testing.T) {
	rows := make([]*treeRow, 2*treePageRows+5)
	for i := range rows {
		rows[i] = &treeRow{Name: fmt.Sprint(i)}
	}
	link := func(n int) string { return fmt.Sprint("page=", n) }
	for _, tc := range []struct {
		page, wantPage, wantLen int
		prev, next              string
	}{
		{0, 1, treePageRows, "", "page=2"},
		{1, 1, treePageRows, "", "page=2"},
		{2, 2, treePageRows, "page=1", "page=3"},
		{3, 3, 5, "page=2", ""},
		{99, 3, 5, "page=2", ""}, // past the end: the last page
		{-4, 1, treePageRows, "", "page=2"},
	} {
		p := paginate(rows, tc.page, link)
		assert.Check(t, is.Equal(p.Page, tc.wantPage), "page %d", tc.page)
		assert.Check(t, is.Len(p.Rows, tc.wantLen), "page %d", tc.page)
		assert.Check(t, is.Equal(p.Prev, tc.prev), "page %d", tc.page)
		assert.Check(t, is.Equal(p.Next, tc.next), "page %d", tc.page)
		assert.Check(t, is.Equal(p.Total, len(rows)))
		assert.Check(t, is.Equal(p.Last, 3))
	}
	empty := paginate(nil, 1, link)
	assert.Check(t, is.Equal(empty.Last, 1))
	assert.Check(t, is.Len(empty.Rows, 0))
}

// TestImplied holds the console's reading of the model (which rung gives which right) to
// authz/model.fga: owners own, write, read and validate but maintain only through can_maintain;
// a maintainer maintains and nothing more; a project's admin owns its warehouses, its members read.
func TestImplied(t *testing.T) {
	for _, tc := range []struct {
		typ, rung string
		want      string
	}{
		{"table", "owner", "owns writes reads validates manage_grants can_get_metadata can_maintain"},
		{"namespace", "writer", "writes reads can_get_metadata"},
		{"warehouse", "reader", "reads can_get_metadata"},
		{"table", "maintainer", "maintains can_maintain"},
		{"namespace", "validator", "validates"},
		{"project", "member", "member reads can_get_metadata"},
		{"project", "admin", "admin member owns writes reads validates manage_grants can_get_metadata can_maintain"},
		{"catalog", "admin", "admin owns writes reads validates manage_grants can_get_metadata can_maintain"},
		{"table", "pass_grants", ""},
	} {
		assert.Check(t, is.Equal(strings.Join(implied(tc.typ, tc.rung), " "), tc.want), "%s %s", tc.typ, tc.rung)
	}
}
