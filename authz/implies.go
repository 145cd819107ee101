package authz

import (
	"maps"
	"slices"
	"strings"

	openfga "github.com/openfga/go-sdk"
)

// maxImpliedDepth bounds how many levels below the granted object Implies follows the model's
// structural edges (project > warehouse > namespace > namespace … > table): past a few levels a
// self-nesting namespace adds nothing new, and the walk stops as soon as a level does.
const maxImpliedDepth = 16

// Implies lists the relations a subject holding rung directly on an object of objectType has,
// as the model derives them, on that object or on any object below it: owner gives owns, writes,
// reads, … on the object; a project's admin gives owns on its warehouses; and so on. It reads the
// embedded model, so a change to model.fga changes the answer (no table to keep in step). A
// subtracted relation (`owns but not managed_access_inheritance`) is taken as not held: the
// answer is what the rung gives where nothing else is granted. Sorted; nil for an unknown type or
// a relation the type lacks.
func Implies(objectType, rung string) []string {
	return theModel.implies(objectType, rung)
}

func (m *model) implies(objectType, rung string) []string {
	if !m.relations[objectType][rung] {
		return nil
	}
	defs := map[string]map[string]openfga.Userset{}
	for _, td := range m.request.TypeDefinitions {
		defs[td.Type] = td.GetRelations()
	}
	// edges[child type] are the relations of a child type its tuple-to-usersets read through, and
	// the parent types each may name.
	type edge struct{ child, relation, parent string }
	var edges []edge
	for _, td := range m.request.TypeDefinitions {
		read := map[string]bool{}
		for _, us := range td.GetRelations() {
			tuplesetsOf(us, read)
		}
		meta := td.GetMetadata()
		for rel := range read {
			rm := meta.GetRelations()[rel]
			for _, ref := range rm.GetDirectlyRelatedUserTypes() {
				edges = append(edges, edge{child: td.Type, relation: rel, parent: ref.Type})
			}
		}
	}

	all := map[string]bool{}
	type level struct {
		typ  string
		held map[string]bool
	}
	seen := map[string]bool{}
	start := closure(defs[objectType], func(r string) bool { return r == rung }, func(string, string) bool { return false })
	frontier := []level{{objectType, start}}
	for depth := 0; len(frontier) > 0 && depth <= maxImpliedDepth; depth++ {
		var next []level
		for _, lv := range frontier {
			key := lv.typ + ":" + strings.Join(slices.Sorted(maps.Keys(lv.held)), ",")
			if seen[key] || len(lv.held) == 0 {
				continue
			}
			seen[key] = true
			for r := range lv.held {
				all[r] = true
			}
			for _, e := range edges {
				if e.parent != lv.typ {
					continue
				}
				held := closure(defs[e.child], func(string) bool { return false }, func(tupleset, rel string) bool {
					return tupleset == e.relation && lv.held[rel]
				})
				next = append(next, level{e.child, held})
			}
		}
		frontier = next
	}
	return slices.Sorted(maps.Keys(all))
}

// closure is the least set of relations of one object (rels: its type's definitions) that holds
// given which relations are held directly (direct) and which are held on the object a tupleset
// relation points at (parent).
func closure(rels map[string]openfga.Userset, direct func(string) bool, parent func(tupleset, rel string) bool) map[string]bool {
	held := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, us := range rels {
			if held[name] {
				continue
			}
			if evalUserset(name, us, held, direct, parent) {
				held[name] = true
				changed = true
			}
		}
	}
	return held
}

func evalUserset(name string, us openfga.Userset, held map[string]bool, direct func(string) bool, parent func(tupleset, rel string) bool) bool {
	switch {
	case us.This != nil:
		return direct(name)
	case us.ComputedUserset != nil:
		return held[us.ComputedUserset.GetRelation()]
	case us.TupleToUserset != nil:
		return parent(us.TupleToUserset.Tupleset.GetRelation(), us.TupleToUserset.ComputedUserset.GetRelation())
	case us.Union != nil:
		for _, c := range us.Union.Child {
			if evalUserset(name, c, held, direct, parent) {
				return true
			}
		}
		return false
	case us.Intersection != nil:
		for _, c := range us.Intersection.Child {
			if !evalUserset(name, c, held, direct, parent) {
				return false
			}
		}
		return len(us.Intersection.Child) > 0
	case us.Difference != nil:
		return evalUserset(name, us.Difference.Base, held, direct, parent) &&
			!evalUserset(name, us.Difference.Subtract, held, direct, parent)
	}
	return false
}

// tuplesetsOf adds to out every relation a tuple-to-userset in us reads through.
func tuplesetsOf(us openfga.Userset, out map[string]bool) {
	switch {
	case us.TupleToUserset != nil:
		out[us.TupleToUserset.Tupleset.GetRelation()] = true
	case us.Union != nil:
		for _, c := range us.Union.Child {
			tuplesetsOf(c, out)
		}
	case us.Intersection != nil:
		for _, c := range us.Intersection.Child {
			tuplesetsOf(c, out)
		}
	case us.Difference != nil:
		tuplesetsOf(us.Difference.Base, out)
		tuplesetsOf(us.Difference.Subtract, out)
	}
}
