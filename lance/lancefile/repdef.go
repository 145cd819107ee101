package lancefile

import (
	"fmt"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Repetition and definition levels (2.1). A leaf column carries, per level
// entry, a rep level (which lists start here) and a def level (which layer,
// if any, is null or empty). Layers are listed innermost first. Decoding
// peels them off from the inside out, like Lance's RepDefUnraveler: first
// the leaf's validity, then each enclosing struct's validity or list's
// offsets, each list step folding the entries that only continued a list
// into the entry that started it.

type layer = enc21pb.RepDefLayer

func isListLayer(l layer) bool {
	switch l {
	case enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST, enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST,
		enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST, enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		return true
	}
	return false
}

func numDefLevels(l layer) uint16 {
	switch l {
	case enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST,
		enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
		return 1
	case enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		return 2
	}
	return 0
}

func checkLayers(layers []layer) error {
	if len(layers) == 0 || len(layers) > maxDepth {
		return fmt.Errorf("%d rep/def layers: %w", len(layers), ErrCorrupt)
	}
	for _, l := range layers {
		if l < enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM || l > enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST {
			return fmt.Errorf("rep/def layer %v: %w", l, ErrUnsupported)
		}
	}
	return nil
}

// maxVisibleDef is the highest def level that still has an item slot: nulls
// inside the innermost list have one, null or empty lists (and anything
// null outside them) do not. ok is false when there are no lists, in which
// case every entry is an item.
func maxVisibleDef(layers []layer) (level uint16, ok bool) {
	for _, l := range layers {
		if isListLayer(l) {
			return level, true
		}
		level += numDefLevels(l)
	}
	return 0, false
}

func maxRep(layers []layer) uint16 {
	var n uint16
	for _, l := range layers {
		if isListLayer(l) {
			n++
		}
	}
	return n
}

// unraveler holds the levels of one page.
type unraveler struct {
	rep, def    []uint16 // nil when the page has none
	layers      []layer
	levelsToRep []uint16 // def level → rep depth at which it is visible
	defCmp      uint16
	repCmp      uint16
	layer       int
	numItems    int
}

func newUnraveler(rep, def []uint16, layers []layer, numItems int) *unraveler {
	u := &unraveler{rep: rep, def: def, layers: layers, numItems: numItems}
	u.levelsToRep = append(u.levelsToRep, 0)
	var r uint16
	for _, l := range layers {
		switch {
		case l == enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM:
			u.levelsToRep = append(u.levelsToRep, r)
		case l == enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
			r++
			u.levelsToRep = append(u.levelsToRep, r, r)
		case l == enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST || l == enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
			r++
			u.levelsToRep = append(u.levelsToRep, r)
		}
	}
	return u
}

func (u *unraveler) current() (layer, error) {
	if u.layer >= len(u.layers) {
		return 0, fmt.Errorf("schema is deeper than the page's %d rep/def layers: %w", len(u.layers), ErrCorrupt)
	}
	return u.layers[u.layer], nil
}

// validity appends this layer's validity (one per visible entry) to out.
func (u *unraveler) validity(out []bool, all bool) ([]bool, error) {
	l, err := u.current()
	if err != nil {
		return nil, err
	}
	if isListLayer(l) {
		return nil, fmt.Errorf("expected an item layer, page has %v: %w", l, ErrCorrupt)
	}
	u.layer++
	if l == enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM {
		n := u.numItems
		if u.def != nil {
			n = u.countVisible()
		} else if u.rep != nil {
			n = len(u.rep) // every entry is visible; lists already folded
		}
		if all {
			return out, nil
		}
		for range n {
			out = append(out, true)
		}
		return out, nil
	}
	if u.def == nil {
		return nil, fmt.Errorf("nullable layer without definition levels: %w", ErrCorrupt)
	}
	cmp := u.defCmp
	u.defCmp++
	for _, d := range u.def {
		if int(d) >= len(u.levelsToRep) {
			return nil, fmt.Errorf("def level %d above the %d defined: %w", d, len(u.levelsToRep)-1, ErrCorrupt)
		}
		if u.levelsToRep[d] <= u.repCmp {
			out = append(out, d <= cmp)
		}
	}
	return out, nil
}

func (u *unraveler) countVisible() int {
	n := 0
	for _, d := range u.def {
		if int(d) < len(u.levelsToRep) && u.levelsToRep[d] <= u.repCmp {
			n++
		}
	}
	return n
}

// offsets appends this list layer's offsets (continuing from the last value
// of offs, which it replaces) and validity.
func (u *unraveler) offsets(offs []int64, valid []bool) ([]int64, []bool, error) {
	l, err := u.current()
	if err != nil {
		return nil, nil, err
	}
	if !isListLayer(l) {
		return nil, nil, fmt.Errorf("expected a list layer, page has %v: %w", l, ErrCorrupt)
	}
	if u.rep == nil {
		return nil, nil, fmt.Errorf("list layer without repetition levels: %w", ErrCorrupt)
	}
	validLevel := u.defCmp
	var nullLevel, emptyLevel uint16
	switch l {
	case enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST:
		u.defCmp++
		nullLevel = validLevel + 1
	case enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
		u.defCmp++
		emptyLevel = validLevel + 1
	case enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		u.defCmp += 2
		nullLevel, emptyLevel = validLevel+1, validLevel+2
	}
	u.layer++
	// Levels above maxLevel belong to null structs further out, which hide
	// this list entirely; levels in (upperNull, maxLevel] are null structs
	// directly around it and read as a null list.
	maxLevel := max(nullLevel, emptyLevel)
	upperNull := maxLevel
	for _, outer := range u.layers[u.layer:] {
		if outer == enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM {
			maxLevel++
		} else if outer != enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM {
			break
		}
	}
	cur := int64(0)
	if len(offs) > 0 {
		cur = offs[len(offs)-1]
		offs = offs[:len(offs)-1]
	}
	u.repCmp++
	if u.def != nil && len(u.def) != len(u.rep) {
		return nil, nil, fmt.Errorf("%d rep levels but %d def levels: %w", len(u.rep), len(u.def), ErrCorrupt)
	}
	w := 0
	for i, r := range u.rep {
		if r == 0 {
			cur++
			continue
		}
		var d uint16
		if u.def != nil {
			d = u.def[i]
			u.def[w] = d
		}
		u.rep[w] = r - 1
		w++
		switch {
		case d == 0:
			offs = append(offs, cur)
			cur++
			valid = append(valid, true)
		case d > maxLevel:
			// Hidden by a null further out: no list at this depth.
		case d == nullLevel || d > upperNull:
			offs = append(offs, cur)
			valid = append(valid, false)
		case d == emptyLevel:
			offs = append(offs, cur)
			valid = append(valid, true)
		default:
			// A valid list whose first item is null.
			offs = append(offs, cur)
			cur++
			valid = append(valid, true)
		}
	}
	offs = append(offs, cur)
	u.rep = u.rep[:w]
	if u.def != nil {
		u.def = u.def[:w]
	}
	return offs, valid, nil
}

// unravelers is the composite over the pages that make up one read.
type unravelers []*unraveler

// validity returns the layer's validity, or nil when every entry is valid.
func (us unravelers) validity() ([]bool, error) {
	all := true
	for _, u := range us {
		l, err := u.current()
		if err != nil {
			return nil, err
		}
		all = all && l == enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
	}
	var out []bool
	for _, u := range us {
		var err error
		if out, err = u.validity(out, all); err != nil {
			return nil, err
		}
	}
	if all {
		return nil, nil
	}
	return out, nil
}

func (us unravelers) offsets() ([]int64, []bool, error) {
	var offs []int64
	var valid []bool
	for _, u := range us {
		var err error
		if offs, valid, err = u.offsets(offs, valid); err != nil {
			return nil, nil, err
		}
	}
	if len(offs) == 0 {
		offs = []int64{0}
	}
	return offs, valid, nil
}
