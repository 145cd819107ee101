package authz

import (
	"slices"
	"testing"

	"gotest.tools/v3/assert"
)

// TestImpliesFollowsTheModel: what a rung implies is read from the model, across its edges: a
// table's owner owns, writes and reads it but does not maintain it; a project's admin owns the
// warehouses below it and can maintain their tables; managed access is taken as off; every
// grantable rung implies at least itself; an unknown rung implies nothing.
func TestImpliesFollowsTheModel(t *testing.T) {
	has := func(typ, rung string, rels ...string) {
		t.Helper()
		got := Implies(typ, rung)
		for _, r := range rels {
			assert.Check(t, slices.Contains(got, r), "%s %s implies %s: %v", typ, rung, r, got)
		}
	}
	lacks := func(typ, rung string, rels ...string) {
		t.Helper()
		got := Implies(typ, rung)
		for _, r := range rels {
			assert.Check(t, !slices.Contains(got, r), "%s %s does not imply %s: %v", typ, rung, r, got)
		}
	}
	has(TypeTable, "owner", "owns", "writes", "reads", "validates", "manage_grants", "can_maintain")
	lacks(TypeTable, "owner", "maintains")
	has(TypeTable, "maintainer", "maintains", "can_maintain")
	lacks(TypeTable, "maintainer", "reads", "writes")
	has(TypeProject, "admin", "admin", "member", "owns", "can_maintain")
	has(TypeProject, "member", "member", "reads", "can_get_metadata")
	lacks(TypeProject, "member", "writes", "owns")
	has(TypeNamespace, "reader", "reads", "can_get_metadata")
	lacks(TypeNamespace, "reader", "writes")
	for typ, rels := range theModel.grantable {
		for rel := range rels {
			has(typ, rel, rel)
		}
	}
	assert.Assert(t, Implies(TypeTable, "no_such_relation") == nil)
	assert.Assert(t, Implies("no_such_type", "owner") == nil)
}
