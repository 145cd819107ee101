package maintenance

import (
	"context"
	"errors"
	"fmt"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// remapIndices, for a compaction of a table without stable row ids, does
// what Lance's commit_compaction does before its Rewrite when an index
// covers a rewritten fragment: reserve the new fragments' ids (one
// ReserveFragments commit; Lance makes one per task), map every moved
// row's old address to its new one, and write a remapped copy of each
// covering index segment. The groups' new fragments get their ids.
func remapIndices(ctx context.Context, ds *lance.Dataset, ver *lance.Version, groups []lance.RewriteGroup, rep *CompactReport) ([]lance.RewrittenIndex, error) {
	affected := map[uint32]bool{}
	for _, g := range groups {
		for _, f := range g.Old {
			affected[uint32(f.GetId())] = true
		}
	}
	var segs []*tablepb.IndexMetadata
	for _, idx := range ver.Indices() {
		if idx.GetFragmentBitmap() == nil {
			segs = append(segs, idx) // Lance remaps it; the commit refuses it (no bitmap to move)
			continue
		}
		frags, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", idx.GetName(), err)
		}
		for _, f := range frags {
			if affected[f] {
				segs = append(segs, idx)
				break
			}
		}
	}
	if len(segs) == 0 {
		return nil, nil
	}
	n := 0
	for _, g := range groups {
		n += len(g.New)
	}
	first, err := tableindex.ReserveFragmentIDs(ctx, ds, n)
	if err != nil {
		return nil, fmt.Errorf("reserve fragment ids: %w", err)
	}
	if loc, err := ds.LatestLocation(ctx); err == nil {
		rep.ReservedVersion = loc.Version
	}
	addrs := &tableindex.AddrMap{}
	for gi := range groups {
		for _, f := range groups[gi].New {
			f.Id = first
			first++
		}
		m, err := tableindex.NewAddrMap(ctx, ds, ver, groups[gi].Old, groups[gi].New)
		if err != nil {
			return nil, err
		}
		if gi == 0 {
			addrs = m
		} else {
			addrs.Merge(m)
		}
	}
	out := make([]lance.RewrittenIndex, 0, len(segs))
	for _, seg := range segs {
		ri, err := tableindex.RemapIndexSegment(ctx, ds, ver, seg, addrs.Map)
		if errors.Is(err, index.ErrUnsupported) || errors.Is(err, lance.ErrUnsupportedFeature) {
			return nil, &unremappableError{uuid: string(seg.GetUuid().GetUuid()), reason: fmt.Sprintf("index %s: %v", seg.GetName(), err)}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ri)
	}
	rep.IndicesRemapped = len(out)
	return out, nil
}

// unremappableError: a segment whose layout lancecat cannot rewrite (found
// when reading it); Compact plans again leaving its fragments alone.
type unremappableError struct {
	uuid, reason string
}

func (e *unremappableError) Error() string { return "maintenance: cannot remap " + e.reason }
