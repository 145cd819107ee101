package authz

import (
	"slices"
	"sort"

	nserr "github.com/lancecat/lancecat/errors"
)

// Action is a door: one operation a handler authorizes. Every door has exactly one rule naming the
// can_* relation it checks; a door without a rule is refused, never given a default tier (the
// reference implementation let unmapped suffixes fall to the writer tier, so each new owner-ish verb
// was writer-reachable until someone remembered the map).
type Action string

// rule is what one door checks: relation on an object of one of types. onParent means the object
// is the parent of the one acted on (a create, or a warehouse door gated by its project).
type rule struct {
	relation string
	onParent bool
	types    []string
}

var (
	onTable     = []string{TypeTable}
	onNamespace = []string{TypeNamespace}
	onWarehouse = []string{TypeWarehouse}
	onProject   = []string{TypeProject}
	onCatalog   = []string{TypeCatalog}
	onGrantable = []string{TypeTable, TypeNamespace, TypeWarehouse}
	// A namespace's parent: another namespace, its warehouse, or (warehouses off) the Catalog.
	namespaceParents = []string{TypeNamespace, TypeWarehouse, TypeCatalog}
)

func is(relation string, types []string) rule       { return rule{relation, false, types} }
func parentIs(relation string, types []string) rule { return rule{relation, true, types} }

// RelationFor is the relation door a checks, and whether it is checked on the parent of the object
// acted on. A door with no rule is an error: refused, never a default tier.
func RelationFor(a Action) (relation string, onParent bool, err error) {
	r, ok := rules[a]
	if !ok {
		return "", false, nserr.PermissionDeniedf("door %q has no authorization rule, so it is refused", string(a))
	}
	return r.relation, r.onParent, nil
}

// Actions lists every door with a rule, sorted.
func Actions() []Action {
	out := make([]Action, 0, len(rules))
	for a := range rules {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ObjectTypes are the types of object a door is checked on (the parent's, for onParent doors).
func (a Action) ObjectTypes() []string { return slices.Clone(rules[a].types) }

// ruleFor is RelationFor plus the check that object is of a type the door is checked on: a handler
// passing the table where the door wants its namespace must fail loudly, not ask a question the
// model answers "no" (or worse, "yes") to.
func ruleFor(a Action, object Object) (rule, error) {
	r, ok := rules[a]
	if !ok {
		return rule{}, nserr.PermissionDeniedf("door %q has no authorization rule, so it is refused", string(a))
	}
	if !slices.Contains(r.types, object.Type) {
		return rule{}, nserr.Internalf("door %q is checked on a %v, not on %s", string(a), r.types, object.String())
	}
	return r, nil
}

// grantActions maps a rung to the door that grants it.
var grantActions = map[string]Action{
	"owner":         AccessGrantOwner,
	"writer":        AccessGrantWriter,
	"reader":        AccessGrantReader,
	"validator":     AccessGrantValidator,
	"maintainer":    AccessGrantMaintainer,
	"manage_grants": AccessGrantManageGrants,
	"pass_grants":   AccessGrantPassGrants,
}

// revokeActions maps a rung to the door that revokes it: revoking, like granting, asks that the
// caller holds the rung itself, so nobody takes away more than they have.
var revokeActions = map[string]Action{
	"owner":         AccessRevokeOwner,
	"writer":        AccessRevokeWriter,
	"reader":        AccessRevokeReader,
	"validator":     AccessRevokeValidator,
	"maintainer":    AccessRevokeMaintainer,
	"manage_grants": AccessRevokeManageGrants,
	"pass_grants":   AccessRevokePassGrants,
}

// GrantAction is the door that grants rung on a table, namespace or warehouse. Any other rung
// (structural edges, derived relations, can_*) cannot be granted through the access doors.
func GrantAction(rung string) (Action, error) {
	a, ok := grantActions[rung]
	if !ok {
		return "", nserr.PermissionDeniedf("%q is not a grantable rung (%s)", rung, rungList)
	}
	return a, nil
}

// RevokeAction is the door that revokes rung on a table, namespace or warehouse.
func RevokeAction(rung string) (Action, error) {
	a, ok := revokeActions[rung]
	if !ok {
		return "", nserr.PermissionDeniedf("%q is not a revocable rung (%s)", rung, rungList)
	}
	return a, nil
}

const rungList = "owner, writer, reader, validator, maintainer, manage_grants, pass_grants"
