package lance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// The row-level writes (delete by predicate, update, merge-insert) and the
// column writes (add columns, alter a column's type) as Lance records them:
// Delete and Update carry the rows they affect (per fragment of the read
// version) and apply them to the newest head at every commit attempt, so a
// concurrent delete or update of other rows of the same fragments is
// rebased (deletion vectors merged) as Lance's conflict resolver does;
// touching the same rows is a retryable conflict.

// ErrRetryableConflict marks a commit conflict the caller may resolve by
// running its whole operation again on the new head (Lance's
// RetryableCommitConflict): another writer modified the same rows or
// rewrote the fragments this one read. It always comes with
// ErrCommitConflict.
var ErrRetryableConflict = errors.New("lance: retryable commit conflict")

// RetryableConflict is an ErrCommitConflict that is also
// ErrRetryableConflict, with a message.
func RetryableConflict(format string, args ...any) error {
	return Errorf(ErrCommitConflict, "%w: "+format, append([]any{ErrRetryableConflict}, args...)...)
}

// RowDeletes are rows to delete: fragment id -> row offsets in it.
type RowDeletes map[uint64][]uint32

// Len is the number of rows.
func (r RowDeletes) Len() uint64 {
	var n uint64
	for _, rows := range r {
		n += uint64(len(rows))
	}
	return n
}

// applyRowDeletes adds deletes to the head's fragments (read is the
// version the rows were found in): per fragment a new deletion file over
// the head's one, or the fragment's removal when no row is left. A
// fragment gone or rewritten since, or a row deleted since, is a
// retryable conflict.
func applyRowDeletes(ctx context.Context, c *buildContext, deletes RowDeletes, read map[uint64]*tablepb.DataFragment) (updated []*tablepb.DataFragment, removed []uint64, err error) {
	head := map[uint64]*tablepb.DataFragment{}
	for _, f := range c.next.Manifest.GetFragments() {
		head[f.GetId()] = f
	}
	ids := slices.Sorted(maps.Keys(deletes))
	for _, id := range ids {
		rows := deletes[id]
		if len(rows) == 0 {
			continue
		}
		f, ok := head[id]
		if !ok {
			return nil, nil, RetryableConflict("fragment %d was removed by a concurrent write", id)
		}
		if r := read[id]; r != nil && !sameFiles(r, f) {
			return nil, nil, RetryableConflict("fragment %d was rewritten by a concurrent write", id)
		}
		dv := NewDeletionVector()
		if del := f.GetDeletionFile(); del != nil {
			// The current vector may live in the directory a branch was
			// made from (base_id); the new one goes into our own.
			store, err := c.ds.BaseStore(c.head, del.BaseId)
			if err != nil {
				return nil, nil, err
			}
			if dv, err = ReadDeletionFile(ctx, store, id, del); err != nil {
				return nil, nil, err
			}
			if read[id] == nil || !proto.Equal(read[id].GetDeletionFile(), del) {
				// Deleted from since we read it: rebase unless a row of ours
				// is among those deletes.
				for _, r := range rows {
					if dv.Contains(r) {
						return nil, nil, RetryableConflict("row %d of fragment %d was modified by a concurrent write", r, id)
					}
				}
			}
		}
		if phys := f.GetPhysicalRows(); phys > 0 {
			if i := slices.IndexFunc(rows, func(r uint32) bool { return uint64(r) >= phys }); i >= 0 {
				return nil, nil, fmt.Errorf("lance: row %d is past fragment %d's %d rows", rows[i], id, phys)
			}
		}
		dv.Add(rows...)
		if phys := f.GetPhysicalRows(); phys > 0 && dv.Len() >= phys {
			removed = append(removed, id)
			continue
		}
		del, err := WriteDeletionFile(ctx, c.ds.store, id, c.txn.GetReadVersion(), dv)
		if err != nil {
			return nil, nil, err
		}
		nf := proto.CloneOf(f)
		nf.DeletionFile = del
		updated = append(updated, nf)
	}
	return updated, removed, nil
}

func sameFiles(a, b *tablepb.DataFragment) bool {
	return slices.EqualFunc(a.GetFiles(), b.GetFiles(), func(x, y *tablepb.DataFile) bool { return proto.Equal(x, y) })
}

// replaceFragments applies updated (by id) and removed to m's fragments.
func replaceFragments(m *tablepb.Manifest, updated []*tablepb.DataFragment, removed []uint64) {
	byID := map[uint64]*tablepb.DataFragment{}
	for _, f := range updated {
		byID[f.GetId()] = f
	}
	kept := m.Fragments[:0:0]
	for _, f := range m.GetFragments() {
		if slices.Contains(removed, f.GetId()) {
			continue
		}
		if u, ok := byID[f.GetId()]; ok {
			f = proto.CloneOf(u)
		}
		kept = append(kept, f)
	}
	m.Fragments = kept
}

// rowWriteCompatible is Lance's resolver for Delete and Update: a
// concurrent delete or update of the same fragments is rebased at build
// time (applyRowDeletes), a compaction or data replacement of them, or a
// Merge, needs a rerun (retryable); Overwrite, Restore and MemWAL changes
// are incompatible.
func rowWriteCompatible(mine map[uint64]bool, other *tablepb.Transaction) (ok, retry bool) {
	touches := func(frags []*tablepb.DataFragment) bool {
		return slices.ContainsFunc(frags, func(f *tablepb.DataFragment) bool { return mine[f.GetId()] })
	}
	switch op := other.GetOperation().(type) {
	case *tablepb.Transaction_Overwrite_, *tablepb.Transaction_Restore_, *tablepb.Transaction_UpdateMemWalState_:
		return false, false
	case *tablepb.Transaction_Merge_:
		return false, true
	case *tablepb.Transaction_Rewrite_:
		old := slices.Clone(op.Rewrite.GetOldFragments())
		for _, g := range op.Rewrite.GetGroups() {
			old = append(old, g.GetOldFragments()...)
		}
		if touches(old) {
			return false, true
		}
	case *tablepb.Transaction_DataReplacement_:
		for _, r := range op.DataReplacement.GetReplacements() {
			if mine[r.GetFragmentId()] {
				return false, true
			}
		}
	}
	return true, false
}

// DeleteRows is Lance's Delete operation computed from rows found by a
// predicate on the read version (Read: those fragments as read). Rows are
// applied to the newest head's deletion vectors when committed.
type DeleteRows struct {
	Rows      RowDeletes
	Read      map[uint64]*tablepb.DataFragment
	Predicate string
	// DeleteAll removes every fragment of Read (a predicate that is
	// always true), as Lance does without scanning; fragments appended
	// since stay.
	DeleteAll bool
}

func (*DeleteRows) Name() string { return "Delete" }

func (d *DeleteRows) build(ctx context.Context, c *buildContext) error {
	m := c.next.Manifest
	var updated []*tablepb.DataFragment
	var removed []uint64
	if d.DeleteAll {
		// Every fragment as read; ones appended since stay (their rows
		// were not there to match).
		head := map[uint64]*tablepb.DataFragment{}
		for _, f := range m.GetFragments() {
			head[f.GetId()] = f
		}
		for _, id := range slices.Sorted(maps.Keys(d.Read)) {
			f, ok := head[id]
			if !ok {
				return RetryableConflict("fragment %d was removed by a concurrent write", id)
			}
			if !sameFiles(d.Read[id], f) {
				return RetryableConflict("fragment %d was rewritten by a concurrent write", id)
			}
			removed = append(removed, id)
		}
	} else {
		var err error
		if updated, removed, err = applyRowDeletes(ctx, c, d.Rows, d.Read); err != nil {
			return err
		}
	}
	replaceFragments(m, updated, removed)
	c.txn.Operation = &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{
		UpdatedFragments:   cloneFragments(updated),
		DeletedFragmentIds: removed,
		Predicate:          d.Predicate,
	}}
	return nil
}

func (d *DeleteRows) mine() map[uint64]bool {
	out := map[uint64]bool{}
	for id := range d.Rows {
		out[id] = true
	}
	if d.DeleteAll {
		for id := range d.Read {
			out[id] = true
		}
	}
	return out
}

func (d *DeleteRows) compatible(other *tablepb.Transaction) bool {
	ok, _ := rowWriteCompatible(d.mine(), other)
	return ok
}

func (d *DeleteRows) retryable(other *tablepb.Transaction) bool {
	_, retry := rowWriteCompatible(d.mine(), other)
	return retry
}

// UpdateRows is Lance's Update operation in RewriteRows mode (what update
// and merge_insert commit): the rows in Rows are deleted from their
// fragments (updated_fragments with new deletion files, removed_fragment_ids
// for fragments left empty) and NewFragments (already written, id 0) hold
// the updated and inserted rows.
type UpdateRows struct {
	Rows           RowDeletes
	Read           map[uint64]*tablepb.DataFragment
	NewFragments   []*tablepb.DataFragment
	FieldsModified []uint32
	// FieldsForPreservingFragBitmap are the ids of the columns an update
	// assigned (Lance records them for its indices).
	FieldsForPreservingFragBitmap []uint32
}

func (*UpdateRows) Name() string { return "Update" }

func (u *UpdateRows) build(ctx context.Context, c *buildContext) error {
	m := c.next.Manifest
	if len(m.GetFields()) == 0 {
		return Errorf(ErrInvalidTableState, "lance: cannot update a dataset without a schema")
	}
	updated, removed, err := applyRowDeletes(ctx, c, u.Rows, u.Read)
	if err != nil {
		return err
	}
	replaceFragments(m, updated, removed)
	next := nextFragmentID(m)
	added, err := newFragments(m, u.NewFragments, &next, c.head.Number()+1)
	if err != nil {
		return err
	}
	m.Fragments = append(m.Fragments, added...)
	c.txn.Operation = &tablepb.Transaction_Update_{Update: &tablepb.Transaction_Update{
		RemovedFragmentIds:            removed,
		UpdatedFragments:              cloneFragments(updated),
		NewFragments:                  cloneFragments(added),
		FieldsModified:                slices.Clone(u.FieldsModified),
		FieldsForPreservingFragBitmap: slices.Clone(u.FieldsForPreservingFragBitmap),
		UpdateMode:                    tablepb.Transaction_REWRITE_ROWS,
	}}
	return nil
}

func (u *UpdateRows) mine() map[uint64]bool {
	out := map[uint64]bool{}
	for id := range u.Rows {
		out[id] = true
	}
	return out
}

func (u *UpdateRows) compatible(other *tablepb.Transaction) bool {
	ok, _ := rowWriteCompatible(u.mine(), other)
	return ok
}

func (u *UpdateRows) retryable(other *tablepb.Transaction) bool {
	_, retry := rowWriteCompatible(u.mine(), other)
	return retry
}

// Merge is Lance's Merge operation (what add_columns and a type-changing
// alter_columns commit): the new schema and every fragment of the table,
// typically the read version's fragments each with a new data file.
// Any data change committed since the read version is a retryable
// conflict (the caller reruns on the new head), as in Lance.
type Merge struct {
	Fragments      []*tablepb.DataFragment
	Schema         []*filepb.Field
	SchemaMetadata map[string][]byte
}

func (*Merge) Name() string { return "Merge" }

func (g *Merge) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	if len(g.Schema) == 0 {
		return Errorf(ErrInvalidInput, "lance: merge without a schema")
	}
	m.Fields = cloneFields(g.Schema)
	if g.SchemaMetadata != nil {
		m.SchemaMetadata = maps.Clone(g.SchemaMetadata)
	}
	m.Fragments = cloneFragments(g.Fragments)
	live := map[int32]bool{}
	for _, f := range m.Fields {
		live[f.GetId()] = true
	}
	if c.next.Indices != nil {
		c.next.Indices.Indices = slices.DeleteFunc(c.next.Indices.Indices, func(idx *tablepb.IndexMetadata) bool {
			return !IsSystemIndex(idx) && slices.ContainsFunc(idx.GetFields(), func(id int32) bool { return !live[id] })
		})
	}
	c.txn.Operation = &tablepb.Transaction_Merge_{Merge: &tablepb.Transaction_Merge{
		Fragments:      cloneFragments(g.Fragments),
		Schema:         cloneFields(g.Schema),
		SchemaMetadata: maps.Clone(g.SchemaMetadata),
	}}
	return nil
}

// compatible follows Lance's check_merge_txn: only metadata changes that
// touch neither data nor schema are compatible; data changes are
// retryable, schema changes, Overwrite and Restore are not.
func (g *Merge) compatible(other *tablepb.Transaction) bool {
	switch other.GetOperation().(type) {
	case *tablepb.Transaction_CreateIndex_, *tablepb.Transaction_ReserveFragments_, *tablepb.Transaction_Clone_,
		*tablepb.Transaction_UpdateConfig_, *tablepb.Transaction_UpdateBases_:
		return true
	}
	return false
}

func (g *Merge) retryable(other *tablepb.Transaction) bool {
	switch other.GetOperation().(type) {
	case *tablepb.Transaction_Update_, *tablepb.Transaction_Append_, *tablepb.Transaction_Delete_,
		*tablepb.Transaction_Rewrite_, *tablepb.Transaction_Merge_, *tablepb.Transaction_DataReplacement_:
		return true
	}
	return false
}

// WithoutDeletions is v as if no row had been deleted: scanning it reads
// every physical row of every fragment, in order (what a writer adding a
// column file to a fragment needs: one value per physical row).
func (v *Version) WithoutDeletions() *Version {
	m := proto.CloneOf(v.File.Manifest)
	for _, f := range m.GetFragments() {
		f.DeletionFile = nil
	}
	return &Version{Location: v.Location, File: &ManifestFile{Manifest: m, Indices: v.File.Indices, Transaction: v.File.Transaction}}
}

// DataStorageVersion is the data file format version of v's data files
// ("2.1", "2.2", …; "2.1" when the manifest does not say).
func (v *Version) DataStorageVersion() string {
	if s := v.Manifest().GetDataFormat().GetVersion(); s != "" {
		return s
	}
	return "2.1"
}

// MaxFieldID is the largest field id v uses, in its schema or in any data
// file (a dropped column's id stays taken while a file holds it), as
// Lance's max_field_id; -1 for none.
func (v *Version) MaxFieldID() int32 {
	id := int32(-1)
	for _, f := range v.Fields() {
		id = max(id, f.GetId())
	}
	for _, f := range v.Manifest().GetFragments() {
		for _, df := range f.GetFiles() {
			for _, fid := range df.GetFields() {
				id = max(id, fid)
			}
		}
	}
	return id
}

// StableRowIDs reports whether v's dataset has stable row ids.
func (v *Version) StableRowIDs() bool {
	return v.Manifest().GetReaderFeatureFlags()&FlagStableRowIDs != 0
}

// SetRowIDs gives fragments (written in order from rows whose stable row
// ids are ids, in the same order) their row id sequences, as Lance keeps
// the ids of rows an update or merge rewrites. The fragments' physical
// rows must add up to len(ids).
func SetRowIDs(frags []*tablepb.DataFragment, ids []uint64) error {
	var total uint64
	for _, f := range frags {
		total += f.GetPhysicalRows()
	}
	if total != uint64(len(ids)) {
		return fmt.Errorf("lance: %d row ids for %d rows", len(ids), total)
	}
	for _, f := range frags {
		n := f.GetPhysicalRows()
		chunk := ids[:n]
		ids = ids[n:]
		vals := make([]byte, 0, 8*len(chunk))
		for _, id := range chunk {
			vals = binary.LittleEndian.AppendUint64(vals, id)
		}
		seg := &tablepb.U64Segment{Segment: &tablepb.U64Segment_Array{Array: &tablepb.EncodedU64Array{
			Array: &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: vals}}}}}
		if slices.IsSorted(chunk) && len(chunk) > 0 && chunk[len(chunk)-1]-chunk[0] == uint64(len(chunk)-1) {
			seg = &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: chunk[0], End: chunk[len(chunk)-1] + 1}}}
		}
		data, err := proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{seg}})
		if err != nil {
			return err
		}
		f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: data}
	}
	return nil
}
