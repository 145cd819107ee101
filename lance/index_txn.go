package lance

// The index entries of the table format: the CreateIndex and
// ReserveFragments transactions, a Rewrite's rewritten indices, and the
// files an index entry lists. Building, reading, optimising and remapping
// indices on a dataset is package lance/index/tableindex's.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Index sentinels (the catalog maps them to TableIndexNotFound and
// TableIndexAlreadyExists).
var (
	ErrIndexNotFound = errors.New("lance: index not found")
	ErrIndexExists   = errors.New("lance: index already exists")
)

// CreateIndex is Lance's CreateIndex operation: new index segments are
// registered (replacing every segment of the same name, as Lance's
// build_manifest does) and the Removed segments (by uuid) unregistered. A
// drop is a CreateIndex with no New segments.
type CreateIndex struct {
	New     []*tablepb.IndexMetadata
	Removed []*tablepb.IndexMetadata
}

func (*CreateIndex) Name() string { return "CreateIndex" }

func (op *CreateIndex) build(_ context.Context, c *buildContext) error {
	if c.next.Indices == nil {
		c.next.Indices = &tablepb.IndexSection{}
	}
	have := map[string]bool{}
	for _, idx := range c.next.Indices.Indices {
		have[string(idx.GetUuid().GetUuid())] = true
	}
	// A segment we meant to remove is gone: someone else dropped or
	// replaced it since we read. Lance's resolver lets the commit through;
	// the result is the same, so we do too.
	removed := map[string]bool{}
	for _, idx := range op.Removed {
		removed[string(idx.GetUuid().GetUuid())] = true
	}
	names := map[string]bool{}
	for _, idx := range op.New {
		if have[string(idx.GetUuid().GetUuid())] {
			return Errorf(ErrInvalidInput, "lance: index segment %s is already registered", FormatUUID(idx.GetUuid().GetUuid()))
		}
		names[idx.GetName()] = true
	}
	c.next.Indices.Indices = slices.DeleteFunc(c.next.Indices.Indices, func(idx *tablepb.IndexMetadata) bool {
		return names[idx.GetName()] || removed[string(idx.GetUuid().GetUuid())]
	})
	for _, idx := range op.New {
		c.next.Indices.Indices = append(c.next.Indices.Indices, proto.CloneOf(idx))
	}
	txn := &tablepb.Transaction_CreateIndex{}
	for _, idx := range op.New {
		txn.NewIndices = append(txn.NewIndices, proto.CloneOf(idx))
	}
	for _, idx := range op.Removed {
		txn.RemovedIndices = append(txn.RemovedIndices, proto.CloneOf(idx))
	}
	c.txn.Operation = &tablepb.Transaction_CreateIndex_{CreateIndex: txn}
	return nil
}

// compatible follows Lance's resolver (check_create_index_txn): appends,
// deletes, updates, schema changes, config changes and other indices leave
// the rows we indexed addressable; a compaction that rewrote a fragment we
// indexed, a data replacement of an indexed field, an overwrite, a restore
// or a MemWAL change does not.
func (op *CreateIndex) compatible(other *tablepb.Transaction) bool {
	covered := map[uint32]bool{}
	fields := map[int32]bool{}
	for _, idx := range op.New {
		frags, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
		if err != nil {
			return false
		}
		for _, f := range frags {
			covered[f] = true
		}
		for _, f := range idx.GetFields() {
			fields[f] = true
		}
	}
	switch o := other.GetOperation().(type) {
	case *tablepb.Transaction_Overwrite_, *tablepb.Transaction_Restore_, *tablepb.Transaction_UpdateMemWalState_:
		return false
	case *tablepb.Transaction_Rewrite_:
		old := slices.Clone(o.Rewrite.GetOldFragments())
		for _, g := range o.Rewrite.GetGroups() {
			old = append(old, g.GetOldFragments()...)
		}
		for _, f := range old {
			if covered[uint32(f.GetId())] {
				return false
			}
		}
	case *tablepb.Transaction_DataReplacement_:
		for _, r := range o.DataReplacement.GetReplacements() {
			for _, f := range r.GetNewFile().GetFields() {
				if fields[f] {
					return false
				}
			}
		}
	}
	return true
}

// LiveRows are the rows of v not deleted (an index build's size).
func LiveRows(v *Version) int64 { return liveRows(v) }

// DataBytes are the bytes of v's data files as the manifest records them
// (0 for files written without their size).
func DataBytes(v *Version) int64 {
	var n int64
	for _, f := range v.Manifest().GetFragments() {
		for _, df := range f.GetFiles() {
			n += int64(df.GetFileSizeBytes())
		}
	}
	return n
}

// SetIndexFiles records IndexMetadata.files (field 10, newer than our
// protos: IndexFile{path = 1, size_bytes = 2}) as unknown fields, as
// Lance 8 writes them.
func SetIndexFiles(meta *tablepb.IndexMetadata, files []index.File) {
	var b []byte
	for _, f := range files {
		var msg []byte
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendString(msg, f.Path)
		msg = protowire.AppendTag(msg, 2, protowire.VarintType)
		msg = protowire.AppendVarint(msg, uint64(f.Size))
		b = protowire.AppendTag(b, indexFilesField, protowire.BytesType)
		b = protowire.AppendBytes(b, msg)
	}
	meta.ProtoReflect().SetUnknown(b)
}

// liveRows are the rows of v not deleted.
func liveRows(v *Version) int64 {
	var rows int64
	for _, f := range v.Manifest().GetFragments() {
		rows += int64(f.GetPhysicalRows() - min(f.GetPhysicalRows(), f.GetDeletionFile().GetNumDeletedRows()))
	}
	return rows
}

// ReserveFragments is Lance's ReserveFragments operation: the manifest's
// max_fragment_id moves up by N, so ids max+1-N … max belong to the
// committer (compaction numbers its new fragments before its Rewrite).
type ReserveFragments struct {
	N uint32
}

func (*ReserveFragments) Name() string { return "ReserveFragments" }

func (op *ReserveFragments) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	if op.N == 0 {
		return Errorf(ErrInvalidInput, "lance: reserving no fragment ids")
	}
	// Lance: update_max_fragment_id (the largest of the recorded max and
	// every fragment id), then + num_fragments.
	var maxID uint64
	if m.MaxFragmentId != nil {
		maxID = uint64(m.GetMaxFragmentId())
	}
	for _, f := range m.Fragments {
		maxID = max(maxID, f.GetId())
	}
	if maxID+uint64(op.N) > 1<<32-1 {
		return Errorf(ErrInvalidInput, "lance: fragment ids exhausted")
	}
	m.MaxFragmentId = proto.Uint32(uint32(maxID + uint64(op.N)))
	c.txn.Operation = &tablepb.Transaction_ReserveFragments_{ReserveFragments: &tablepb.Transaction_ReserveFragments{NumFragments: op.N}}
	return nil
}

// compatible: a reservation only moves the counter; it is rebuilt on
// whatever the head is.
func (*ReserveFragments) compatible(*tablepb.Transaction) bool { return true }

// RewrittenIndex is one index segment a Rewrite replaces by its remapped
// copy (Lance's RewrittenIndex).
type RewrittenIndex struct {
	Old *tablepb.IndexMetadata
	// NewID names the remapped copy's directory _indices/<NewID>/.
	NewID uuid.UUID
	// Details and Version are what the transaction records as
	// new_index_details and new_index_version.
	Details *anypb.Any
	Version uint32
	// Files are the remapped copy's files (IndexMetadata.files).
	Files []index.File
}

// applyRewrittenIndices gives each rewritten index entry of sec its new
// uuid (and files) and moves its fragment bitmap from each group's old
// fragments to its new ones (Lance's handle_rewrite_indices).
func applyRewrittenIndices(sec *tablepb.IndexSection, rewritten []RewrittenIndex, groups []*tablepb.Transaction_Rewrite_RewriteGroup) error {
	seen := map[string]bool{}
	for _, ri := range rewritten {
		old := string(ri.Old.GetUuid().GetUuid())
		if seen[old] {
			return Errorf(ErrInvalidInput, "lance: index %s rewritten twice in one compaction", FormatUUID(ri.Old.GetUuid().GetUuid()))
		}
		seen[old] = true
		var entry *tablepb.IndexMetadata
		if sec != nil {
			for _, idx := range sec.Indices {
				if string(idx.GetUuid().GetUuid()) == old {
					entry = idx
				}
			}
		}
		if entry == nil {
			// Dropped or replaced since we read: our copy is stale.
			return RetryableConflict("index %s was replaced by a concurrent write", FormatUUID(ri.Old.GetUuid().GetUuid()))
		}
		if entry.GetFragmentBitmap() == nil {
			return Errorf(ErrInvalidInput, "lance: index %s has no fragment bitmap; it cannot be rewritten", entry.GetName())
		}
		frags, err := index.DecodeFragmentBitmap(entry.GetFragmentBitmap())
		if err != nil {
			return err
		}
		for _, g := range groups {
			in := 0
			for _, f := range g.GetOldFragments() {
				if slices.Contains(frags, uint32(f.GetId())) {
					in++
				}
			}
			if in == 0 {
				continue
			}
			if in != len(g.GetOldFragments()) {
				return Errorf(ErrInvalidInput, "lance: a rewrite group mixes fragments index %s covers with ones it does not", entry.GetName())
			}
			frags = slices.DeleteFunc(frags, func(id uint32) bool {
				return slices.ContainsFunc(g.GetOldFragments(), func(f *tablepb.DataFragment) bool { return uint32(f.GetId()) == id })
			})
			for _, f := range g.GetNewFragments() {
				frags = append(frags, uint32(f.GetId()))
			}
		}
		slices.Sort(frags)
		b, err := index.EncodeFragmentBitmap(frags)
		if err != nil {
			return err
		}
		entry.FragmentBitmap = b
		entry.Uuid = &tablepb.UUID{Uuid: slices.Clone(ri.NewID[:])}
		if ri.Files != nil {
			replaceIndexFiles(entry, ri.Files)
		}
	}
	return nil
}

// rewrittenIndicesPB is the transaction's rewritten_indices.
func rewrittenIndicesPB(rewritten []RewrittenIndex) []*tablepb.Transaction_Rewrite_RewrittenIndex {
	out := make([]*tablepb.Transaction_Rewrite_RewrittenIndex, 0, len(rewritten))
	for _, ri := range rewritten {
		out = append(out, &tablepb.Transaction_Rewrite_RewrittenIndex{
			OldId:           proto.CloneOf(ri.Old.GetUuid()),
			NewId:           &tablepb.UUID{Uuid: slices.Clone(ri.NewID[:])},
			NewIndexDetails: proto.CloneOf(ri.Details),
			NewIndexVersion: ri.Version,
		})
	}
	return out
}

// replaceIndexFiles sets IndexMetadata.files (field 10, unknown to our
// protos) to files, keeping every other unknown field of meta.
func replaceIndexFiles(meta *tablepb.IndexMetadata, files []index.File) {
	var keep []byte
	rest := meta.ProtoReflect().GetUnknown()
	for len(rest) > 0 {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			break
		}
		if num != indexFilesField {
			keep = append(keep, rest[:n+m]...)
		}
		rest = rest[n+m:]
	}
	SetIndexFiles(meta, files)
	meta.ProtoReflect().SetUnknown(append(keep, meta.ProtoReflect().GetUnknown()...))
}

// OptimizeIndices is the CreateIndex an index optimisation commits: its
// Created segments replace the others of their names, except the Kept ones
// (which must still be there: a concurrent optimize or drop changed the
// index otherwise), and the Removed ones are unregistered.
type OptimizeIndices struct {
	Created, Kept, Removed []*tablepb.IndexMetadata
}

func (*OptimizeIndices) Name() string { return "CreateIndex" }

func (op *OptimizeIndices) build(_ context.Context, c *buildContext) error {
	if c.next.Indices == nil {
		c.next.Indices = &tablepb.IndexSection{}
	}
	have := map[string]bool{}
	for _, idx := range c.next.Indices.Indices {
		have[string(idx.GetUuid().GetUuid())] = true
	}
	// Every segment we read must still be there: a concurrent optimize or
	// drop changed the index, and our segment would undo it.
	for _, idx := range slices.Concat(op.Kept, op.Removed) {
		if !have[string(idx.GetUuid().GetUuid())] {
			return RetryableConflict("index %s was changed by a concurrent write", idx.GetName())
		}
	}
	names := map[string]bool{}
	for _, idx := range op.Created {
		names[idx.GetName()] = true
	}
	removed := map[string]bool{}
	for _, idx := range op.Removed {
		removed[string(idx.GetUuid().GetUuid())] = true
	}
	var keptNow []*tablepb.IndexMetadata
	c.next.Indices.Indices = slices.DeleteFunc(c.next.Indices.Indices, func(idx *tablepb.IndexMetadata) bool {
		if names[idx.GetName()] && !removed[string(idx.GetUuid().GetUuid())] {
			keptNow = append(keptNow, idx)
		}
		return names[idx.GetName()] || removed[string(idx.GetUuid().GetUuid())]
	})
	// Lance's order: the kept segments of each name, then its new one.
	txn := &tablepb.Transaction_CreateIndex{}
	for _, idx := range keptNow {
		c.next.Indices.Indices = append(c.next.Indices.Indices, idx)
		txn.NewIndices = append(txn.NewIndices, proto.CloneOf(idx))
	}
	for _, idx := range op.Created {
		c.next.Indices.Indices = append(c.next.Indices.Indices, proto.CloneOf(idx))
		txn.NewIndices = append(txn.NewIndices, proto.CloneOf(idx))
	}
	for _, idx := range op.Removed {
		txn.RemovedIndices = append(txn.RemovedIndices, proto.CloneOf(idx))
	}
	c.txn.Operation = &tablepb.Transaction_CreateIndex_{CreateIndex: txn}
	return nil
}

// compatible is CreateIndex's rule for the segments we add.
func (op *OptimizeIndices) compatible(other *tablepb.Transaction) bool {
	return (&CreateIndex{New: op.Created}).compatible(other)
}

// IndexStats are what describe_table_index_stats answers.
type IndexStats struct {
	// Type is Lance's upper-case type name (BTREE, BITMAP, ...).
	Type string
	// NumIndexedRows are the live rows of the fragments the index covers;
	// NumUnindexedRows those of the other fragments.
	NumIndexedRows   uint64
	NumUnindexedRows uint64
	// NumIndices is the number of segments.
	NumIndices   int
	DistanceType string
}

// IndexStoresAddresses reports whether seg records rows by their address (fragment id << 32 |
// offset) rather than by their stable row id, on a dataset with stable row ids (without them the
// two are the same). Lance 14's BTREE (index version 1) is trained on row addresses, as Lance's
// zone maps and bloom filters always were; the other indices Lance writes record stable row ids.
// Found with pylance 14: its BTREE on a stable-row-id dataset answered row addresses, which were
// looked up as row ids and matched nothing past the first fragment.
func IndexStoresAddresses(seg *tablepb.IndexMetadata) bool {
	url := seg.GetIndexDetails().GetTypeUrl()
	switch url[strings.LastIndexByte(url, '.')+1:] {
	case "BTreeIndexDetails":
		return seg.GetIndexVersion() >= 1
	case "ZoneMapIndexDetails", "BloomFilterIndexDetails":
		return true
	case "NGramIndexDetails":
		// version 1 (Lance 14) lists row addresses, 0 row ids
		return seg.GetIndexVersion() >= 1
	}
	return false
}
