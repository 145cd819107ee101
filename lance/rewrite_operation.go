package lance

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// RewriteGroup is one bin of a compaction: Old, adjacent fragments of the
// read version, replaced by New, fragments holding the same live rows in
// the same order (already written; id 0 gets a fresh id when committed).
type RewriteGroup struct {
	Old []*tablepb.DataFragment
	New []*tablepb.DataFragment
}

// Rewrite is Lance's Rewrite operation (what compact_files commits): each
// group's old fragments are replaced by its new ones (fragments then
// ordered by id, as Lance orders them).
//
// Indices: on a dataset with stable row ids the rows keep their ids, so
// every index of row ids stays valid and only its fragment bitmap changes
// (a group's old fragments become its new ones), as Lance's build_manifest
// does; an index of row addresses (IndexStoresAddresses: Lance 14's BTREE)
// stops covering the group. On
// a dataset without them a covered fragment's rows move to new addresses:
// every index covering a group must be in Indices (remapped copies written
// by RemapIndexSegment, the new fragments' ids reserved beforehand), and
// the commit gives each its new uuid and fragment bitmap (Lance's
// rewritten_indices); a covering index not in Indices is refused.
type Rewrite struct {
	Groups  []RewriteGroup
	Indices []RewrittenIndex
}

func (*Rewrite) Name() string { return "Rewrite" }

func (r *Rewrite) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	if len(r.Groups) == 0 {
		return Errorf(ErrInvalidInput, "lance: rewrite without groups")
	}
	stable := c.head.StableRowIDs()
	next := nextFragmentID(m)
	groups := make([]*tablepb.Transaction_Rewrite_RewriteGroup, 0, len(r.Groups))
	for _, g := range r.Groups {
		if len(g.Old) == 0 {
			return Errorf(ErrInvalidInput, "lance: rewrite group without old fragments")
		}
		// Every old fragment must still be there exactly as read: the
		// resolver already refused commits that deleted from or rewrote
		// them, this catches what it cannot see.
		pos := make([]int, len(g.Old))
		for i, old := range g.Old {
			j := slices.IndexFunc(m.Fragments, func(f *tablepb.DataFragment) bool { return f.GetId() == old.GetId() })
			if j < 0 {
				return RetryableConflict("fragment %d was removed by a concurrent write", old.GetId())
			}
			if !sameFiles(old, m.Fragments[j]) || !proto.Equal(old.GetDeletionFile(), m.Fragments[j].GetDeletionFile()) {
				return RetryableConflict("fragment %d was modified by a concurrent write", old.GetId())
			}
			pos[i] = j
		}
		// A rewrite keeps its rows' ids: the new fragments must carry them
		// (no new ids are assigned).
		added := claimFragmentIDs(g.New, &next)
		for _, f := range added {
			if stable && f.GetRowIdSequence() == nil {
				return Errorf(ErrInvalidInput, "lance: rewritten fragment without the row ids of its rows on a dataset with stable row ids")
			}
		}
		contiguous := true
		for i := 1; i < len(pos); i++ {
			contiguous = contiguous && pos[i] == pos[0]+i
		}
		if contiguous {
			m.Fragments = slices.Replace(m.Fragments, pos[0], pos[0]+len(pos), added...)
		} else {
			m.Fragments = slices.DeleteFunc(m.Fragments, func(f *tablepb.DataFragment) bool {
				return slices.ContainsFunc(g.Old, func(o *tablepb.DataFragment) bool { return o.GetId() == f.GetId() })
			})
			m.Fragments = append(m.Fragments, added...)
		}
		if err := rewriteIndexBitmaps(c.next.Indices, g.Old, added, stable, r.rewritten()); err != nil {
			return err
		}
		groups = append(groups, &tablepb.Transaction_Rewrite_RewriteGroup{
			OldFragments: cloneFragments(g.Old),
			NewFragments: cloneFragments(added),
		})
	}
	// As Lance's build_manifest: fragments ordered by id, so the new ones
	// (with the highest ids) come after the fragments that stayed.
	slices.SortStableFunc(m.Fragments, func(x, y *tablepb.DataFragment) int { return cmpUint(x.GetId(), y.GetId()) })
	op := &tablepb.Transaction_Rewrite{Groups: groups}
	if len(r.Indices) > 0 {
		if stable {
			return Errorf(ErrInvalidInput, "lance: remapped indices on a dataset with stable row ids")
		}
		if err := applyRewrittenIndices(c.next.Indices, r.Indices, groups); err != nil {
			return err
		}
		op.RewrittenIndices = rewrittenIndicesPB(r.Indices)
	}
	c.txn.Operation = &tablepb.Transaction_Rewrite_{Rewrite: op}
	return nil
}

// rewritten are the uuids of the index segments r remaps.
func (r *Rewrite) rewritten() map[string]bool {
	out := map[string]bool{}
	for _, ri := range r.Indices {
		out[string(ri.Old.GetUuid().GetUuid())] = true
	}
	return out
}

// rewriteIndexBitmaps moves every index covering old to added (Lance's
// recalculate_fragment_bitmap). A group partly covered by an index is
// refused (a plan never makes one), as is a covered group on a dataset
// without stable row ids (its index would need remapping).
func rewriteIndexBitmaps(sec *tablepb.IndexSection, old, added []*tablepb.DataFragment, stable bool, remapped map[string]bool) error {
	if sec == nil {
		return nil
	}
	for _, idx := range sec.Indices {
		if !stable && remapped[string(idx.GetUuid().GetUuid())] {
			continue // applyRewrittenIndices moves it
		}
		if idx.GetFragmentBitmap() == nil {
			if stable {
				continue
			}
			return Errorf(ErrInvalidInput, "lance: index %s has no fragment bitmap; compacting would need remapping it", idx.GetName())
		}
		frags, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
		if err != nil {
			return err
		}
		covered := 0
		for _, f := range old {
			if slices.Contains(frags, uint32(f.GetId())) {
				covered++
			}
		}
		if covered == 0 {
			continue
		}
		if covered != len(old) {
			return Errorf(ErrInvalidInput, "lance: a rewrite group mixes fragments index %s covers with ones it does not", idx.GetName())
		}
		if !stable {
			if IsSystemIndex(idx) {
				return Errorf(ErrUnsupportedFeature, "lance: system index %s covers rewritten fragments", idx.GetName())
			}
			return Errorf(ErrInvalidInput, "lance: index %s covers rewritten fragments and was not remapped", idx.GetName())
		}
		frags = slices.DeleteFunc(frags, func(id uint32) bool {
			return slices.ContainsFunc(old, func(f *tablepb.DataFragment) bool { return uint32(f.GetId()) == id })
		})
		// An index of row addresses (IndexStoresAddresses) names the old fragments' rows by
		// where they were: it does not cover the new fragments, whose rows are searched flat
		// until the index is rebuilt or optimized (as Lance leaves such an index after an
		// update rewrites rows).
		if !IndexStoresAddresses(idx) {
			for _, f := range added {
				frags = append(frags, uint32(f.GetId()))
			}
		}
		slices.Sort(frags)
		b, err := index.EncodeFragmentBitmap(frags)
		if err != nil {
			return err
		}
		idx.FragmentBitmap = b
	}
	return nil
}

func (r *Rewrite) oldIDs() map[uint64]bool {
	out := map[uint64]bool{}
	for _, g := range r.Groups {
		for _, f := range g.Old {
			out[f.GetId()] = true
		}
	}
	return out
}

// rewriteCompatible is Lance's check_rewrite_txn (without a fragment
// reuse index): appends, fragment reservations, schema projections,
// config and base changes leave the rewritten fragments alone; a delete,
// update, rewrite or data replacement of other fragments is rebased, of
// ours (and any Merge) is a retryable conflict, as is an index created
// over our fragments; Overwrite and Restore are incompatible.
func (r *Rewrite) rewriteCompatible(other *tablepb.Transaction) (ok, retry bool) {
	mine := r.oldIDs()
	anyMine := func(ids ...uint64) bool { return slices.ContainsFunc(ids, func(id uint64) bool { return mine[id] }) }
	fragIDs := func(frags []*tablepb.DataFragment) []uint64 {
		ids := make([]uint64, len(frags))
		for i, f := range frags {
			ids[i] = f.GetId()
		}
		return ids
	}
	switch op := other.GetOperation().(type) {
	case *tablepb.Transaction_Append_, *tablepb.Transaction_ReserveFragments_, *tablepb.Transaction_Project_,
		*tablepb.Transaction_Clone_, *tablepb.Transaction_UpdateConfig_, *tablepb.Transaction_UpdateMemWalState_,
		*tablepb.Transaction_UpdateBases_:
		return true, false
	case *tablepb.Transaction_Delete_:
		if anyMine(append(fragIDs(op.Delete.GetUpdatedFragments()), op.Delete.GetDeletedFragmentIds()...)...) {
			return false, true
		}
		return true, false
	case *tablepb.Transaction_Update_:
		if anyMine(append(fragIDs(op.Update.GetUpdatedFragments()), op.Update.GetRemovedFragmentIds()...)...) {
			return false, true
		}
		return true, false
	case *tablepb.Transaction_Rewrite_:
		old := fragIDs(op.Rewrite.GetOldFragments())
		for _, g := range op.Rewrite.GetGroups() {
			old = append(old, fragIDs(g.GetOldFragments())...)
		}
		if anyMine(old...) {
			return false, true
		}
		return true, false
	case *tablepb.Transaction_DataReplacement_:
		for _, rep := range op.DataReplacement.GetReplacements() {
			if mine[rep.GetFragmentId()] {
				return false, true
			}
		}
		return true, false
	case *tablepb.Transaction_Merge_:
		return false, true
	case *tablepb.Transaction_CreateIndex_:
		for _, idx := range op.CreateIndex.GetNewIndices() {
			if idx.GetFragmentBitmap() == nil {
				return false, true
			}
			frags, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
			if err != nil {
				return false, true
			}
			for _, f := range frags {
				if mine[uint64(f)] {
					return false, true
				}
			}
		}
		return true, false
	}
	// Overwrite, Restore and operations newer than ours.
	return false, false
}

func (r *Rewrite) compatible(other *tablepb.Transaction) bool {
	ok, _ := r.rewriteCompatible(other)
	return ok
}

func (r *Rewrite) retryable(other *tablepb.Transaction) bool {
	_, retry := r.rewriteCompatible(other)
	return retry
}

// CarryRowVersions gives newFrags, written from the live rows of old (in
// order) on a dataset with stable row ids, the created-at and
// last-updated-at version of each of those rows, as Lance's
// recalc_versions_for_rewritten_fragments does: the old fragments'
// sequences (version 1 for rows without one), deleted rows dropped,
// cut at the new fragments' boundaries.
func (d *Dataset) CarryRowVersions(ctx context.Context, ver *Version, old, newFrags []*tablepb.DataFragment) error {
	var created, updated []uint64
	for _, f := range old {
		n := f.GetPhysicalRows()
		c, err := rowVersions(f.GetInlineCreatedAtVersions(), f.GetCreatedAtVersionSequence() != nil, n)
		if err != nil {
			return fmt.Errorf("fragment %d created-at versions: %w", f.GetId(), err)
		}
		u := c
		if f.GetLastUpdatedAtVersionSequence() != nil {
			if u, err = rowVersions(f.GetInlineLastUpdatedAtVersions(), true, n); err != nil {
				return fmt.Errorf("fragment %d last-updated versions: %w", f.GetId(), err)
			}
		}
		var dv *DeletionVector
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.BaseStore(ver, del.BaseId)
			if err != nil {
				return err
			}
			if dv, err = ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
				return err
			}
		}
		for i := range n {
			if dv != nil && dv.Contains(uint32(i)) {
				continue
			}
			created, updated = append(created, c[i]), append(updated, u[i])
		}
	}
	var total uint64
	for _, f := range newFrags {
		total += f.GetPhysicalRows()
	}
	if total != uint64(len(created)) {
		return fmt.Errorf("lance: %d row versions for %d rewritten rows", len(created), total)
	}
	for _, f := range newFrags {
		n := f.GetPhysicalRows()
		c, err := encodeVersions(created[:n])
		if err != nil {
			return err
		}
		u, err := encodeVersions(updated[:n])
		if err != nil {
			return err
		}
		created, updated = created[n:], updated[n:]
		f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: c}
		f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: u}
	}
	return nil
}

// rowVersions expands an inline version sequence to one version per row
// (version 1 for every row when there is none).
func rowVersions(inline []byte, present bool, rows uint64) ([]uint64, error) {
	out := make([]uint64, 0, rows)
	if !present {
		for range rows {
			out = append(out, 1)
		}
		return out, nil
	}
	if inline == nil {
		return nil, Errorf(ErrUnsupportedFeature, "lance: external row version sequences are not supported")
	}
	var seq tablepb.RowDatasetVersionSequence
	if err := proto.Unmarshal(inline, &seq); err != nil {
		return nil, fmt.Errorf("%w: row version sequence: %w", ErrCorruptManifest, err)
	}
	for _, run := range seq.GetRuns() {
		span, err := appendSegment(nil, run.GetSpan())
		if err != nil {
			return nil, err
		}
		for range span {
			out = append(out, run.GetVersion())
		}
	}
	if uint64(len(out)) != rows {
		return nil, fmt.Errorf("%w: %d row versions for %d rows", ErrCorruptManifest, len(out), rows)
	}
	return out, nil
}

// encodeVersions is a RowDatasetVersionSequence of versions: one run per
// stretch of equal versions.
func encodeVersions(versions []uint64) ([]byte, error) {
	seq := &tablepb.RowDatasetVersionSequence{}
	for i := 0; i < len(versions); {
		j := i
		for j < len(versions) && versions[j] == versions[i] {
			j++
		}
		seq.Runs = append(seq.Runs, &tablepb.RowDatasetVersionRun{
			Span:    &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: uint64(i), End: uint64(j)}}},
			Version: versions[i],
		})
		i = j
	}
	return proto.Marshal(seq)
}
