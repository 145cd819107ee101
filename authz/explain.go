package authz

import (
	"context"
	"fmt"
	"slices"

	openfga "github.com/openfga/go-sdk"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
)

// Explaining a caller's access: which rungs they hold on an object, and through which object of
// its lineage (the object itself, a namespace above it, its warehouse, the warehouse's project,
// the catalog). It is a read-only query for the console (console/access.go), asked by the caller
// about themselves, and only on an object they may see (the door my_permissions guards:
// can_get_metadata, or membership on a project).
//
// The answer costs a bounded number of calls however many rungs there are: the lineage is read
// off the structural edges the checks themselves follow (one Read per level, at most
// maxLineage levels), then every question, the directly assignable rungs on every object of the
// lineage and the effective relations on the object, goes in OpenFGA batch checks
// (batchCheckSize questions each; a lineage of five asks about forty: one call).

// maxLineage bounds the lineage walk (namespaces nest, but not without end).
const maxLineage = 64

// Holding is one directly assignable rung the principal holds on one object of the lineage,
// through a tuple naming them or a team or role they belong to.
type Holding struct {
	Object   Object
	Relation string
}

// Explanation is a principal's access to an object.
type Explanation struct {
	// Lineage is the object and the containers above it, nearest first.
	Lineage []Object
	// Direct are the rungs held on objects of the lineage, in lineage order.
	Direct []Holding
	// Effective are the relations the principal holds on the object itself (the model's owns,
	// writes, reads, validates, maintains, manage_grants, can_get_metadata; admin and member on
	// a project), each true or false.
	Effective map[string]bool
}

// directRungs are the assignable relations asked about on each type of the lineage (pass_grants
// gives no right of its own but is a grant people look for).
var directRungs = map[string][]string{
	TypeCatalog:   {"admin", "writer", "reader", "validator", "maintainer"},
	TypeProject:   {"admin", "member"},
	TypeWarehouse: {"owner", "writer", "reader", "validator", "maintainer", "pass_grants"},
	TypeNamespace: {"owner", "writer", "reader", "validator", "maintainer", "pass_grants"},
	TypeTable:     {"owner", "writer", "reader", "validator", "maintainer", "pass_grants"},
}

// effectiveRelations are the relations reported on the object itself.
var effectiveRelations = map[string][]string{
	TypeProject:   {"admin", "member"},
	TypeWarehouse: {"owns", "writes", "reads", "validates", "maintains", "manage_grants", "can_get_metadata"},
	TypeNamespace: {"owns", "writes", "reads", "validates", "maintains", "manage_grants", "can_get_metadata"},
	TypeTable:     {"owns", "writes", "reads", "validates", "maintains", "manage_grants", "can_get_metadata", "can_maintain"},
}

// seeAction is the door that decides whether a caller may ask about an object.
var seeAction = map[string]Action{
	TypeProject:   ProjectMyPermissions,
	TypeWarehouse: WarehouseMyPermissions,
	TypeNamespace: NamespaceMyPermissions,
	TypeTable:     TableMyPermissions,
}

// Explain answers principal's access to object (a project, warehouse, namespace or table).
// PermissionDenied when the principal may not see the object: the answer then says nothing.
func (f *OpenFGA) Explain(ctx context.Context, principal Principal, object Object) (Explanation, error) {
	action, ok := seeAction[object.Type]
	if !ok {
		return Explanation{}, nserr.InvalidInputf("access of a %s cannot be explained", object.Type)
	}
	if err := f.Check(ctx, principal, action, object); err != nil {
		return Explanation{}, err
	}
	lineage, err := f.lineage(ctx, object)
	if err != nil {
		return Explanation{}, err
	}
	var items []checkItem
	for _, o := range lineage {
		for _, r := range directRungs[o.Type] {
			items = append(items, checkItem{r, o})
		}
	}
	// navigator says why a container is visible to someone granted only below it; above the
	// object it is no right of the object's, so it is asked about the object alone.
	if object.Type == TypeNamespace || object.Type == TypeWarehouse {
		items = append(items, checkItem{"navigator", object})
	}
	nDirect := len(items)
	for _, r := range effectiveRelations[object.Type] {
		items = append(items, checkItem{r, object})
	}
	answers := make([]bool, len(items))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(f.limit, 1))
	for from := 0; from < len(items); from += batchCheckSize {
		to := min(from+batchCheckSize, len(items))
		g.Go(func() error {
			got, err := f.batchCheckItems(gctx, principal, items[from:to])
			if err != nil {
				return err
			}
			copy(answers[from:to], got)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Explanation{}, err
	}
	ex := Explanation{Lineage: lineage, Effective: map[string]bool{}}
	for i, it := range items {
		if i < nDirect {
			if answers[i] {
				ex.Direct = append(ex.Direct, Holding{Object: it.object, Relation: it.relation})
			}
			continue
		}
		ex.Effective[it.relation] = answers[i]
	}
	return ex, nil
}

// lineage is object and its containers, nearest first, following parent (namespaces, tables)
// and project (warehouses) edges as stored.
func (f *OpenFGA) lineage(ctx context.Context, object Object) ([]Object, error) {
	out := []Object{object}
	for cur := object; len(out) <= maxLineage; {
		var rel string
		switch cur.Type {
		case TypeTable, TypeNamespace:
			rel = "parent"
		case TypeWarehouse:
			rel = "project"
		default:
			return out, nil
		}
		name := cur.String()
		tuples, err := f.read(ctx, openfga.ReadRequestTupleKey{Object: &name, Relation: &rel})
		if err != nil {
			return nil, err
		}
		if len(tuples) == 0 {
			return out, nil
		}
		// One parent per object: the first edge is the one the checks follow.
		typ, id, ok := cutObject(tuples[0].User)
		if !ok {
			return nil, nserr.Internalf("authorization: %s#%s names %q, not an object", name, rel, tuples[0].User)
		}
		cur = Object{Type: typ, ID: id}
		if slices.Contains(out, cur) {
			return nil, nserr.Internalf("authorization: the lineage of %s loops at %s", object, cur)
		}
		out = append(out, cur)
	}
	return nil, nserr.Internalf("authorization: the lineage of %s is deeper than %d", object, maxLineage)
}

// Explainer is what answers Explain; the console takes it (nil: authorization off).
type Explainer interface {
	Explain(ctx context.Context, principal Principal, object Object) (Explanation, error)
}

var _ Explainer = (*OpenFGA)(nil)

// String is a holding as people read it ("reader on namespace:sales").
func (h Holding) String() string { return fmt.Sprintf("%s on %s", h.Relation, h.Object) }
