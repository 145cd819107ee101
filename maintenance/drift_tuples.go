package maintenance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Tuple drift (issue 17 item 5: "governance records (… tuples) whose object is gone").
//
// The scan reads every tuple of the store page by page (OpenFGA's Read without a tuple key) and
// gathers the table, namespace, warehouse and project objects the tuples name, as object or as
// user (a namespace is the user of its children's parent edges). Each object is looked up once:
//
//   - table, namespace: gone when the catalog answers NotFound (objectGone), and no trash record
//     holds it (a recoverable drop keeps its tuples so the owner can undrop), and its top-level
//     namespace is not bound to a warehouse that is quarantined or whose record is missing (those
//     roots are not read: their objects are unknown, not gone);
//   - warehouse, project: gone when the control root has no record (a project being deleted
//     still has its record: not gone);
//   - anything the catalog cannot answer (403, an unreadable record, an id stored hashed because
//     the name was too long to encode reversibly) is not drift.
//
// One finding per gone object (Key: the object as OpenFGA spells it, Reason: how many tuples
// name it). Repair revokes them (the authorizer's RevokeAll: every tuple on the object and every
// edge naming it, with the navigator tuples its grantees held above recomputed), under the
// rules of every drift repair: a cleared report that lists the same finding, older than the
// drift grace, a fresh scan that finds it again, the root-wide drift lease, and one more lookup
// just before (an object made again under the name since is a new object whose tuples are not
// drift).

// DriftDanglingTuples is the tuple drift category.
const DriftDanglingTuples = "dangling_tuples"

// ActionRevoke is the repair of a dangling_tuples finding: delete every tuple naming the object.
const ActionRevoke = "revoke"

// TupleSource is what the tuple drift needs of the authorizer (*authz.OpenFGA has it).
type TupleSource interface {
	// ReadTuples is one page of every tuple in the store ("" token: the first; "" next: the last).
	ReadTuples(ctx context.Context, token string) (page []authz.Tuple, next string, err error)
	RevokeAll(ctx context.Context, object authz.Object) ([]authz.Tuple, error)
}

// maxTuplePages bounds one scan's read of the store (100 tuples a page: ten million tuples).
const maxTuplePages = 100_000

// scanTuples adds the dangling_tuples findings to rep (or says in rep.Skipped why not).
func (s *Service) scanTuples(ctx context.Context, trash trashIndex, rep *OrphanReport) error {
	src := s.Drift.Tuples
	if src == nil {
		rep.Skipped[DriftDanglingTuples] = "not checked: authorization is off (no tuples) or its store cannot be listed here"
		return nil
	}
	count := map[authz.Object]int{}
	token := ""
	for pages := 0; ; pages++ {
		if pages == maxTuplePages {
			rep.Skipped[DriftDanglingTuples] = fmt.Sprintf("not checked: the store holds more than %d pages of tuples", maxTuplePages)
			return nil
		}
		page, next, err := src.ReadTuples(ctx, token)
		if err != nil {
			return fmt.Errorf("maintenance: drift: tuples: %w", err)
		}
		for _, t := range page {
			seen := map[authz.Object]bool{}
			for _, side := range []string{t.Object, t.User} {
				o, ok := authz.ParseObject(side)
				if !ok || seen[o] {
					continue
				}
				switch o.Type {
				case authz.TypeTable, authz.TypeNamespace, authz.TypeWarehouse, authz.TypeProject:
					seen[o] = true
					count[o]++
				}
			}
		}
		if next == "" || next == token {
			break
		}
		token = next
	}
	objs := make([]authz.Object, 0, len(count))
	for o := range count {
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].String() < objs[j].String() })
	unroutable, err := s.unroutableTops(ctx)
	if err != nil {
		return err
	}
	hashed := 0
	for _, o := range objs {
		kind, id, ok := objectKindID(o)
		if !ok {
			hashed++
			continue
		}
		gone, err := s.authzObjectGone(ctx, kind, id, unroutable)
		if err != nil || !gone {
			continue // present, or unanswerable: not drift
		}
		if (kind == registry.KindTable || kind == registry.KindNamespace) && trash.holds(kind, id) {
			continue // an undrop gives it back, with its grants
		}
		f := DriftFinding{Category: DriftDanglingTuples, Kind: kind, ID: id, Key: o.String(), Action: ActionRevoke,
			Reason: fmt.Sprintf("the %s no longer exists; %d tuples name it (grants on a gone object): repair revokes them", kind, count[o])}
		if len(trash.unreadable) > 0 && (kind == registry.KindTable || kind == registry.KindNamespace) {
			f.Action, f.Reason = ActionNone, f.Reason+" (not repaired here: unreadable trash records)"
		}
		rep.Drift = append(rep.Drift, f)
	}
	if hashed > 0 {
		rep.Skipped[DriftDanglingTuples+"_hashed"] = fmt.Sprintf("%d objects named by tuples have hashed ids (names too long to encode reversibly): not checked", hashed)
	}
	return nil
}

// objectKindID is the registry kind and catalog id an authorization object names (ok false:
// the id is hashed and cannot be reversed).
func objectKindID(o authz.Object) (string, ident.ID, bool) {
	segs, ok := authz.DecodeID(o.ID)
	if !ok {
		return "", nil, false
	}
	switch o.Type {
	case authz.TypeTable:
		return registry.KindTable, ident.ID(segs), true
	case authz.TypeNamespace:
		return registry.KindNamespace, ident.ID(segs), true
	case authz.TypeWarehouse, authz.TypeProject:
		if len(segs) != 1 {
			return "", nil, false
		}
		return o.Type, ident.ID(segs), true
	}
	return "", nil, false
}

// unroutableTops are the top-level namespaces bound to a warehouse that is quarantined or whose
// record is missing or unreadable: what lies below them is not read, so it is never "gone".
func (s *Service) unroutableTops(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	store := s.Drift.Records
	if store == nil {
		return out, nil
	}
	binds, err := registry.List[registry.Binding](ctx, store, registry.BindingsPrefix)
	if err != nil {
		return nil, fmt.Errorf("maintenance: drift: tuples: bindings: %w", err)
	}
	for _, b := range binds.Records {
		wh, _, err := registry.Read[registry.Warehouse](ctx, store, registry.WarehouseKey(b.WarehouseID))
		if err != nil || !wh.Active() {
			out[b.TopNamespace] = true
		}
	}
	return out, nil
}

// authzObjectGone says whether the object of kind and id is gone (false with no error: present,
// or not ours to judge).
func (s *Service) authzObjectGone(ctx context.Context, kind string, id ident.ID, unroutable map[string]bool) (bool, error) {
	switch kind {
	case registry.KindTable, registry.KindNamespace:
		if len(id) == 0 || unroutable[id[0]] {
			return false, nil
		}
		return s.objectGone(ctx, kind, id)
	case authz.TypeWarehouse, authz.TypeProject:
		store := s.Drift.Records
		if store == nil {
			return false, nil
		}
		var err error
		if kind == authz.TypeWarehouse {
			_, _, err = registry.Read[registry.Warehouse](ctx, store, registry.WarehouseKey(id[0]))
		} else {
			_, _, err = registry.Read[registry.Project](ctx, store, registry.ProjectKey(id[0]))
		}
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, registry.ErrNotFound):
			return true, nil
		default:
			return false, err
		}
	}
	return false, nil
}

// repairTuples revokes the tuples of a dangling_tuples finding, after checking once more that
// the object is gone and still not held by the trash.
func (s *Service) repairTuples(ctx context.Context, f DriftFinding) (refused string, err error) {
	o, ok := authz.ParseObject(f.Key)
	if !ok || s.Drift.Tuples == nil {
		return "not an authorization object this catalog names: left as it is", nil
	}
	if kind, id, ok := objectKindID(o); !ok || kind != f.Kind || !ident.ID(f.ID).Equal(id) {
		return "the finding's key does not name its object: left as it is", nil
	}
	unroutable, err := s.unroutableTops(ctx)
	if err != nil {
		return "", err
	}
	if gone, gerr := s.authzObjectGone(ctx, f.Kind, f.ID, unroutable); gerr != nil || !gone {
		return "the " + f.Kind + " exists again (or cannot be read): its tuples are kept", nil
	}
	if f.Kind == registry.KindTable || f.Kind == registry.KindNamespace {
		var trash trashIndex
		if s.Drift.Trash != nil {
			recs, unreadable, err := s.Drift.Trash(ctx)
			if err != nil {
				return "", err
			}
			if len(unreadable) > 0 {
				return "unreadable trash records: its tuples are kept", nil
			}
			trash.recs = recs
		}
		if trash.holds(f.Kind, f.ID) {
			return "the trash holds it now (an undrop gives its grants back): its tuples are kept", nil
		}
	}
	if _, err := s.Drift.Tuples.RevokeAll(ctx, o); err != nil {
		return "", fmt.Errorf("revoking %s: %w", strings.TrimSpace(f.Key), err)
	}
	return "", nil
}
