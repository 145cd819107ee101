package authz_test

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestExplain asks OpenFGA who holds what on a table two namespaces deep, and through which
// object of its lineage: a direct grant, one through a team on a namespace above, the project's
// membership, the creator's ownership at every level; and a caller who may not see the table
// learns nothing.
func TestExplain(t *testing.T) {
	f := newFGA(t)
	e := seedEstate(t, f)
	ctx := context.Background()
	alice, bob, carol, dave := authz.User("alice"), authz.User("bob"), authz.User("carol"), authz.User("dave")
	assert.NilError(t, f.Grant(ctx, alice.Subject(), "reader", e.tb))
	assert.NilError(t, f.Grant(ctx, bob.Subject(), "member", authz.TeamObject("eng")))
	assert.NilError(t, f.Grant(ctx, authz.TeamMembers("eng"), "writer", e.nsA))
	assert.NilError(t, f.Grant(ctx, carol.Subject(), "member", e.project))

	for _, tc := range []struct {
		name      string
		who       authz.Principal
		direct    []authz.Holding
		effective map[string]bool
	}{
		{"a direct reader", alice, []authz.Holding{{Object: e.tb, Relation: "reader"}},
			map[string]bool{"reads": true, "writes": false, "owns": false, "can_get_metadata": true, "manage_grants": false}},
		{"a writer through a team, two levels up", bob, []authz.Holding{{Object: e.nsA, Relation: "writer"}},
			map[string]bool{"reads": true, "writes": true, "owns": false, "can_maintain": false}},
		{"a project member", carol, []authz.Holding{{Object: e.project, Relation: "member"}},
			map[string]bool{"reads": true, "writes": false, "owns": false}},
		{"the creator", e.creator, []authz.Holding{
			{Object: e.tb, Relation: "owner"}, {Object: e.nsAB, Relation: "owner"}, {Object: e.nsA, Relation: "owner"},
			{Object: e.warehouse, Relation: "owner"}, {Object: e.project, Relation: "admin"}, {Object: e.project, Relation: "member"}},
			map[string]bool{"reads": true, "writes": true, "owns": true, "validates": true, "can_maintain": true, "maintains": false, "manage_grants": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := f.Explain(ctx, tc.who, e.tb)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(ex.Lineage, []authz.Object{e.tb, e.nsAB, e.nsA, e.warehouse, e.project}))
			assert.Check(t, is.DeepEqual(ex.Direct, tc.direct))
			for rel, want := range tc.effective {
				assert.Check(t, is.Equal(ex.Effective[rel], want), rel)
			}
		})
	}

	// Someone who may not see the table is refused, exactly as its doors refuse.
	_, err := f.Explain(ctx, dave, e.tb)
	assert.Check(t, is.Equal(code(t, err), nserr.PermissionDenied))
	// A namespace above a grant is visible (navigator), and says so.
	ex, err := f.Explain(ctx, alice, e.nsA)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(ex.Direct, []authz.Holding{{Object: e.nsA, Relation: "navigator"}}))
	assert.Check(t, ex.Effective["can_get_metadata"] && !ex.Effective["reads"])
}
