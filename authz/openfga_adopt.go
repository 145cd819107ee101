package authz

import (
	"context"

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
