package authz

import (
	"context"
	"log/slog"
	"slices"

	nserr "github.com/lancecat/lancecat/errors"
)

// Listed is one entry of a listing: the object, and the parent whose effective rung it inherits
// through its `parent` edge — zero when the entry's parent edge is not known to point there (a
// top-level namespace may hang from a warehouse rather than from the Catalog).
type Listed struct {
	Object Object
	Parent Object
}

// coverRelation is, per listing door, the relation on a parent that grants the door on every child
// hanging from that parent, so one check on the parent decides them all.
//
// Why this is sound (model.fga; TestListingCoverIsSound proves it on the model, and
// TestListingFastPathMatchesPerItem against OpenFGA):
//
//   - table.list_entry checks table#can_read_data = reads = reader or writer or owner or
//     `reads from parent`; namespace.list_entry checks namespace#can_get_metadata = reads or …,
//     with namespace#reads = … or `reads from parent`. So whoever holds `reads` on the object a
//     child's parent edge names holds the door on the child.
//   - Every relation on those paths is a plain union: no `but not`, no `and` (the only exclusion
//     in the model, `owns but not managed_access_inheritance`, feeds manage_grants, which no
//     listing door reaches). Nothing can take away what `reads from parent` gives.
//   - `reads` on a namespace, the Catalog or a warehouse is what the estate admin (catalog admin ⊂
//     owns ⊂ writes ⊂ reads), a project admin or member (warehouse reads), and a namespace reader,
//     writer or owner hold, directly or inherited.
//
// The caller names the parent only where the child's edge provably points there (Listed.Parent):
// every table and every namespace below the top level is seeded with the edge to its id's parent
// (parentObject in the handlers, AdoptOrphan for orphans); a top-level namespace may hang from a
// warehouse instead of the Catalog, so it gets no parent and is checked for itself.
//
// One deliberate difference: an orphan (a table or namespace written to storage behind the
// catalog's back, with no tuples at all) is listed to whoever reads its parent, where a per-item
// check hides it until the gate adopts it on first touch (AdoptOrphan, which attaches it to exactly
// that parent). The listing shows what adoption will grant; it reveals nothing to anyone else.
var coverRelation = map[Action]string{
	TableListEntry:     "reads",
	NamespaceListEntry: "reads",
}

// parentFilterer is the optional part of an Authorizer that short-circuits listings by parent.
type parentFilterer interface {
	filterListing(ctx context.Context, principal Principal, action Action, items []Listed) ([]Object, error)
}

// FilterListing returns the objects of items principal may pass door action on, in order, like
// Authorizer.Filter, but decides every entry whose parent the caller reads with one check on that
// parent (one per distinct parent), and the rest with Filter. All or nothing, as Filter.
func FilterListing(ctx context.Context, a Authorizer, principal Principal, action Action, items []Listed) ([]Object, error) {
	if pf, ok := a.(parentFilterer); ok {
		return pf.filterListing(ctx, principal, action, items)
	}
	objs := make([]Object, len(items))
	for i, it := range items {
		objs[i] = it.Object
	}
	return a.Filter(ctx, principal, action, objs)
}

func (f *OpenFGA) filterListing(ctx context.Context, principal Principal, action Action, items []Listed) ([]Object, error) {
	objs := make([]Object, len(items))
	for i, it := range items {
		objs[i] = it.Object
	}
	cover, ok := coverRelation[action]
	if !ok || len(items) == 0 {
		return f.Filter(ctx, principal, action, objs)
	}
	// Identity, the door's rule and the object's shape, as a per-item check would.
	relation, err := f.prepareAll(ctx, principal, action, objs)
	if err != nil {
		return nil, err
	}
	var parents []Object
	parentIndex := map[Object]int{}
	for _, it := range items {
		if _, seen := parentIndex[it.Parent]; it.Parent.IsZero() || seen {
			continue
		}
		if !slices.Contains(namespaceParents, it.Parent.Type) {
			return nil, errParent(it)
		}
		if err := it.Parent.Validate(); err != nil {
			return nil, err
		}
		parentIndex[it.Parent] = len(parents)
		parents = append(parents, it.Parent)
	}
	// The parents are decided like any list of objects: one check for one parent, batch checks
	// (or ListObjects) when a listing spans many namespaces (ListAllTables).
	covered, calls, err := f.decideAll(ctx, principal, cover, parents)
	if err != nil {
		f.audit.LogAttrs(ctx, slog.LevelWarn, "authorization filter failed", slog.String("decision", string(decisionFailure)),
			slog.String("principal", principal.String()), slog.String("action", string(action)),
			slog.Int("objects", len(items)), slog.String("error", err.Error()))
		return nil, err
	}
	coveredBy := func(it Listed) bool {
		i, ok := parentIndex[it.Parent]
		return ok && covered[i]
	}
	var rest []Object
	byParent := 0
	for _, it := range items {
		if coveredBy(it) {
			byParent++
			continue
		}
		rest = append(rest, it.Object)
	}
	var allowedRest []Object
	if len(rest) > 0 {
		if allowedRest, err = f.filterPrepared(ctx, principal, action, relation, rest); err != nil {
			return nil, err
		}
	}
	if byParent > 0 {
		f.audit.LogAttrs(ctx, slog.LevelInfo, "authorization filter", slog.String("principal", principal.String()),
			slog.String("action", string(action)), slog.String("relation", cover+" on parent"),
			slog.Int("objects", byParent), slog.Int("allowed", byParent), slog.Int("openfga_calls", calls))
	}
	// Merge, in input order: an entry is kept when its parent covers it or Filter kept it.
	out := make([]Object, 0, byParent+len(allowedRest))
	j := 0
	for _, it := range items {
		if coveredBy(it) {
			out = append(out, it.Object)
			continue
		}
		if j < len(allowedRest) && allowedRest[j] == it.Object {
			out = append(out, it.Object)
			j++
		}
	}
	return out, nil
}

func errParent(it Listed) error {
	return nserr.Internalf("listing entry %s names %s as its parent, which is no namespace, warehouse or catalog", it.Object.String(), it.Parent.String())
}
