package authz_test

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// The reference's door table (§2.2), pinned: a change here is a policy change.
func TestRelationFor(t *testing.T) {
	cases := []struct {
		action   authz.Action
		relation string
		onParent bool
	}{
		{authz.TableCreate, "can_create_table", true},
		{authz.TableDeclare, "can_create_table", true},
		{authz.TableRegister, "can_create_table", true},
		{authz.NamespaceCreate, "can_create_namespace", true},
		{authz.WarehouseCreate, "can_create_warehouse", true},
		{authz.TableDrop, "can_drop", false},
		{authz.TableDeregister, "can_deregister", false},
		{authz.TableRename, "can_drop", false},
		{authz.TableRestore, "can_restore", false},
		{authz.TableCreateTag, "can_create_tag", false},
		{authz.TableUpdateTag, "can_update_tag", false},
		{authz.TableDeleteTag, "can_drop", false},
		{authz.TableDeleteBranch, "can_drop", false},
		{authz.TableDeleteVersions, "can_drop", false},
		{authz.TableProtectionSet, "can_drop", false},
		{authz.TableUndrop, "can_drop", false},
		{authz.TablePolicySet, "can_drop", false},
		{authz.TablePolicyDelete, "can_drop", false},
		{authz.NamespaceDrop, "can_delete", false},
		{authz.NamespaceUndrop, "can_delete", false},
		{authz.NamespaceProtectionSet, "can_delete", false},
		{authz.NamespacePolicySet, "can_delete", false},
		{authz.TableDescribe, "can_get_metadata", false},
		{authz.TableQuery, "can_read_data", false},
		{authz.TableInsert, "can_write_data", false},
		{authz.TableCompactionCommit, "can_maintain", false},
		{authz.AccessRevokeOwner, "can_revoke_owner", false},
		{authz.AccessRevokeReader, "can_revoke_reader", false},
		{authz.ProjectCreate, "can_create_project", false},
		{authz.WarehouseDelete, "can_administer", true},
		{authz.EventsRead, "can_observe_events", false},
	}
	for _, c := range cases {
		t.Run(string(c.action), func(t *testing.T) {
			rel, onParent, err := authz.RelationFor(c.action)
			assert.NilError(t, err)
			assert.Equal(t, rel, c.relation)
			assert.Equal(t, onParent, c.onParent)
		})
	}
}

func TestUnmappedDoorIsRefused(t *testing.T) {
	_, _, err := authz.RelationFor("table.something_new")
	assert.Assert(t, errors.Is(err, nserr.ErrPermissionDenied), err)
	// Even with authorization off: the mistake must show in the default configuration.
	err = authz.Disabled{}.Check(context.Background(), authz.Anonymous, "table.something_new", authz.TableObject(ident.ID{"a", "t"}))
	assert.Assert(t, errors.Is(err, nserr.ErrPermissionDenied), err)
}

func TestEveryDoorHasOneRelation(t *testing.T) {
	assert.Assert(t, len(authz.Actions()) >= 54+40, "only %d doors", len(authz.Actions()))
	for _, a := range authz.Actions() {
		rel, _, err := authz.RelationFor(a)
		assert.NilError(t, err)
		assert.Assert(t, rel != "")
		assert.Assert(t, len(a.ObjectTypes()) > 0)
	}
}

func TestGrantAction(t *testing.T) {
	a, err := authz.GrantAction("writer")
	assert.NilError(t, err)
	assert.Equal(t, a, authz.AccessGrantWriter)
	r, err := authz.RevokeAction("owner")
	assert.NilError(t, err)
	assert.Equal(t, r, authz.AccessRevokeOwner)
	for _, bad := range []string{"parent", "can_drop", "admin", ""} {
		_, err := authz.GrantAction(bad)
		assert.Assert(t, errors.Is(err, nserr.ErrPermissionDenied), bad)
		_, err = authz.RevokeAction(bad)
		assert.Assert(t, errors.Is(err, nserr.ErrPermissionDenied), bad)
	}
}

func TestDisabledAllowsEverything(t *testing.T) {
	ctx := context.Background()
	var d authz.Disabled
	tbl := authz.TableObject(ident.ID{"a", "t"})
	assert.Assert(t, !d.Enabled())
	assert.NilError(t, d.Check(ctx, authz.Anonymous, authz.TableDrop, tbl))
	assert.NilError(t, d.Check(ctx, "", authz.ProjectCreate, authz.Catalog))
	got, err := d.Filter(ctx, authz.Anonymous, authz.TableListEntry, []authz.Object{tbl})
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []authz.Object{tbl})
	assert.NilError(t, d.SeedCreate(ctx, authz.Anonymous, tbl, authz.NamespaceObject(ident.ID{"a"})))
	_, err = d.RevokeAll(ctx, tbl)
	assert.NilError(t, err)
	assert.Assert(t, errors.Is(d.Grant(ctx, authz.User("x").Subject(), "reader", tbl), nserr.ErrUnsupported))
	// A door checked on the wrong kind of object is a handler bug, answered as one.
	err = d.Check(ctx, authz.Anonymous, authz.TableCreate, tbl)
	assert.Assert(t, errors.Is(err, nserr.ErrInternal), err)
}
