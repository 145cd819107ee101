package authz

import (
	"context"
	"slices"

	openfga "github.com/openfga/go-sdk"
)

// AdoptOrphan attaches object to parent when object has no parent edge at all: a table or
// namespace written straight to storage (a LanceDB directory client on the catalog root) has no
// tuples, so nothing above it reaches it and even estate admins are refused. The structural edge
// (and its inverse) is what a create through the catalog would have seeded, minus the owner: the
// object joins the hierarchy it already sits in by id, and nobody gains a grant of their own.
// Reports whether it wrote the edge; an object that has a parent edge is left alone.
func (f *OpenFGA) AdoptOrphan(ctx context.Context, object, parent Object) (bool, error) {
	if err := object.Validate(); err != nil {
		return false, err
	}
	if err := parent.Validate(); err != nil {
		return false, err
	}
	edges, err := f.read(ctx, openfga.ReadRequestTupleKey{
		Relation: openfga.PtrString("parent"), Object: openfga.PtrString(object.String()),
	})
	if err != nil || len(edges) > 0 {
		return false, err
	}
	seeded, err := seedTuples(Principal("user:adopter"), object, parent)
	if err != nil {
		return false, err
	}
	var structural []Tuple
	for _, t := range seeded {
		if t.Relation != "owner" {
			structural = append(structural, t)
		}
	}
	if err := f.writeTuples(ctx, structural, "adopting "+object.String()); err != nil {
		return false, err
	}
	return true, nil
}

// Adoption is what adopting one existing object takes: the structural tuples it lacks (its edge to
// the parent it sits under) and, when nobody holds its owner relation, the owner grant.
type Adoption struct {
	Object  Object
	Parent  Object  // zero for a project (projects hang from nothing)
	Missing []Tuple // structural tuples to write
	Owner   Subject // granted the owner relation (admin on a project); "" if it has one, or none was given
}

// Changes reports whether the adoption writes anything.
func (a Adoption) Changes() bool { return len(a.Missing) > 0 || a.Owner != "" }

// ownerRelation is the relation that makes a subject an object's owner: admin on a project.
func ownerRelation(typ string) string {
	if typ == TypeProject {
		return "admin"
	}
	return "owner"
}

// Adopt brings an object made while authorization was off (so with no tuples at all) into the
// hierarchy: the structural edges a create through the catalog would have written under parent,
// and, if owner is given and nobody owns the object, owner as its owner (with the navigator tuples
// a grant writes). With apply false it only says what it would write. It is idempotent: an object
// that has its edges and an owner is left as it is, and a second run changes nothing.
func (f *OpenFGA) Adopt(ctx context.Context, object, parent Object, owner Subject, apply bool) (Adoption, error) {
	a := Adoption{Object: object, Parent: parent}
	if owner != "" {
		if err := owner.validate(); err != nil {
			return a, err
		}
	}
	// seedTuples checks the object under its parent; the placeholder principal's owner tuple is
	// dropped, as in AdoptOrphan: the owner is decided below.
	wanted, err := seedTuples(Principal("user:adopter"), object, parent)
	if err != nil {
		return a, err
	}
	have, err := f.Grants(ctx, "", object)
	if err != nil {
		return a, err
	}
	ownerRel, owned := ownerRelation(object.Type), false
	for _, t := range have {
		if t.Relation == ownerRel {
			owned = true
		}
	}
	for _, t := range wanted {
		if t.Relation == ownerRel || slices.Contains(have, t) {
			continue
		}
		if t.Relation == "child" {
			// The inverse edge sits on the parent: ask for that one tuple, not every child of a
			// namespace that may hold thousands (one read per adopted object, not per sibling).
			inverse, err := f.read(ctx, openfga.ReadRequestTupleKey{User: openfga.PtrString(t.User),
				Relation: openfga.PtrString(t.Relation), Object: openfga.PtrString(t.Object)})
			if err != nil {
				return a, err
			}
			if len(inverse) > 0 {
				continue
			}
		}
		a.Missing = append(a.Missing, t)
	}
	if !owned && owner != "" {
		a.Owner = owner
	}
	if !apply || !a.Changes() {
		return a, nil
	}
	if err := f.writeTuples(ctx, a.Missing, "adopting "+object.String()); err != nil {
		return a, err
	}
	if a.Owner != "" {
		if err := f.Grant(ctx, a.Owner, ownerRel, object); err != nil {
			return a, err
		}
	}
	return a, nil
}
