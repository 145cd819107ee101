package lance

// Index remapping after a compaction on a dataset without stable row ids,
// as Lance's compaction does it by default (defer_index_remap = false,
// rust/lance/src/dataset/optimize.rs commit_compaction):
//
//   - the new fragments' ids are reserved first by a ReserveFragments
//     commit, so each moved row's new address (fragment id << 32 | offset)
//     is known before the Rewrite commits;
//   - each index covering a rewritten fragment is rewritten under a new
//     uuid with its row ids mapped (rows compaction dropped as deleted are
//     dropped from the index), index.rs remap_index;
//   - the Rewrite transaction lists them in rewritten_indices {old_id,
//     new_id, new_index_details, new_index_version}; building the manifest
//     gives the index entry its new uuid and moves its fragment bitmap from
//     the old fragments to the new ones (handle_rewrite_indices).
//
// lancecat remaps BTREE, BITMAP, LABEL_LIST, IVF_FLAT and IVF_PQ segments
// (built by lancecat or the SDK), INVERTED in index_remap_fts.go. Other types (NGRAM, HNSW, …)
// are not remapped; the compaction planner leaves the fragments they cover
// alone (CanRemapIndex says why), so no index is left pointing at a
// removed fragment.

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

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
		return errorf(ErrInvalidInput, "lance: reserving no fragment ids")
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
		return errorf(ErrInvalidInput, "lance: fragment ids exhausted")
	}
	m.MaxFragmentId = proto.Uint32(uint32(maxID + uint64(op.N)))
	c.txn.Operation = &tablepb.Transaction_ReserveFragments_{ReserveFragments: &tablepb.Transaction_ReserveFragments{NumFragments: op.N}}
	return nil
}

// compatible: a reservation only moves the counter; it is rebuilt on
// whatever the head is.
func (*ReserveFragments) compatible(*tablepb.Transaction) bool { return true }

// ReserveFragmentIDs commits a ReserveFragments of n ids and answers the
// first one (the ids are first … first+n-1).
func (d *Dataset) ReserveFragmentIDs(ctx context.Context, n int) (uint64, error) {
	if n <= 0 || n > 1<<31 {
		return 0, errorf(ErrInvalidInput, "lance: reserving %d fragment ids", n)
	}
	v, err := d.Commit(ctx, &ReserveFragments{N: uint32(n)}, CommitOptions{})
	if err != nil {
		return 0, err
	}
	return uint64(v.Manifest().GetMaxFragmentId()) + 1 - uint64(n), nil
}

// AddrMap maps the row addresses of rewritten fragments to their new
// addresses: per old fragment, one entry per physical row (noAddr for the
// rows compaction dropped as deleted). Addresses of other fragments are
// not in it and keep their value.
type AddrMap struct {
	frags map[uint32][]uint64
}

const noAddr = ^uint64(0)

// NewAddrMap maps the live rows of old (in order, deletion vectors
// applied) onto the rows of newFrags (in order, ids already assigned), as
// Lance's transpose_row_addrs does.
func (d *Dataset) NewAddrMap(ctx context.Context, ver *Version, old, newFrags []*tablepb.DataFragment) (*AddrMap, error) {
	m := &AddrMap{frags: map[uint32][]uint64{}}
	ni, noff := 0, uint64(0)
	next := func() (uint64, error) {
		for ni < len(newFrags) && noff >= newFrags[ni].GetPhysicalRows() {
			ni, noff = ni+1, 0
		}
		if ni >= len(newFrags) {
			return 0, fmt.Errorf("lance: rewritten fragments hold fewer rows than the live rows of %d old fragments", len(old))
		}
		id := newFrags[ni].GetId()
		if id == 0 {
			return 0, fmt.Errorf("lance: remapping needs the new fragments' ids (reserved first)")
		}
		a := id<<32 | noff
		noff++
		return a, nil
	}
	for _, f := range old {
		var dv *DeletionVector
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.baseStore(ver, del.BaseId)
			if err != nil {
				return nil, err
			}
			if dv, err = ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
				return nil, err
			}
		}
		rows := make([]uint64, f.GetPhysicalRows())
		for i := range rows {
			if dv != nil && dv.Contains(uint32(i)) {
				rows[i] = noAddr
				continue
			}
			a, err := next()
			if err != nil {
				return nil, err
			}
			rows[i] = a
		}
		m.frags[uint32(f.GetId())] = rows
	}
	for ni < len(newFrags) && noff >= newFrags[ni].GetPhysicalRows() {
		ni, noff = ni+1, 0
	}
	if ni != len(newFrags) {
		return nil, fmt.Errorf("lance: rewritten fragments hold more rows than the live rows of the old fragments")
	}
	return m, nil
}

// Merge adds o's fragments (another rewrite group) to m.
func (m *AddrMap) Merge(o *AddrMap) {
	for k, v := range o.frags {
		m.frags[k] = v
	}
}

// Map is m as an index.RowMap.
func (m *AddrMap) Map(id uint64) (uint64, bool) {
	rows, ok := m.frags[uint32(id>>32)]
	if !ok {
		return id, true
	}
	off := id & (1<<32 - 1)
	if off >= uint64(len(rows)) || rows[off] == noAddr {
		// A row the fragment no longer has (or never had): Lance maps it
		// to None and the index forgets it.
		return 0, false
	}
	return rows[off], true
}

// Len is the number of old fragments m maps.
func (m *AddrMap) Len() int { return len(m.frags) }

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

// remappableScalar are the scalar types RemapIndexSegment rewrites.
var remappableScalar = map[string]index.Type{
	index.BTreeDetailsURL:     index.BTree,
	index.BitmapDetailsURL:    index.Bitmap,
	index.LabelListDetailsURL: index.LabelList,
}

// CanRemapIndex says whether RemapIndexSegment can rewrite seg, and if not
// why.
func CanRemapIndex(seg *tablepb.IndexMetadata) (bool, string) {
	url := seg.GetIndexDetails().GetTypeUrl()
	if _, ok := remappableScalar[url]; ok || isFTSSegment(seg) {
		return true, ""
	}
	if url == index.VectorDetailsURL {
		if kind, _ := index.ParseVectorDetails(seg.GetIndexDetails().GetValue()); kind == index.IVFPQ || kind == index.IVFFlat {
			return true, ""
		}
		return false, fmt.Sprintf("index %s is a vector index lancecat cannot remap (only IVF_FLAT and IVF_PQ)", seg.GetName())
	}
	name := index.TypeName(url)
	if name == "" {
		name = url
	}
	return false, fmt.Sprintf("index %s of type %s cannot be remapped by lancecat yet", seg.GetName(), name)
}

// RemapIndexSegment writes a copy of seg (an index segment of ver) with
// its row ids mapped by m, under a new uuid, as Lance's remap_index does.
func (d *Dataset) RemapIndexSegment(ctx context.Context, ver *Version, seg *tablepb.IndexMetadata, m index.RowMap) (RewrittenIndex, error) {
	if isFTSSegment(seg) {
		return d.remapFTSSegment(ctx, ver, seg, m) // index_remap_fts.go
	}
	if ok, why := CanRemapIndex(seg); !ok {
		return RewrittenIndex{}, errorf(ErrUnsupportedFeature, "lance: %s", why)
	}
	src, err := d.baseStore(ver, seg.BaseId)
	if err != nil {
		return RewrittenIndex{}, err
	}
	srcStore := index.BucketStore(src, IndexDir(seg))
	id := uuid.New()
	dst := index.BucketStore(d.store, IndicesDir+id.String()+"/")
	out := RewrittenIndex{Old: seg, NewID: id}
	url := seg.GetIndexDetails().GetTypeUrl()
	if t, ok := remappableScalar[url]; ok {
		info, err := index.InspectScalar(ctx, t, srcStore)
		if err != nil {
			return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		rb, err := index.NewScalarRebuild(t, info.ValueType, index.BuildOptions{BatchSize: info.BatchSize})
		if err != nil {
			return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		if err := rb.AddSegment(ctx, srcStore, m); err != nil {
			return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		if out.Files, err = rb.Finish(ctx, dst); err != nil {
			return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		// The scalar remap answers its own details and version (the
		// segment's: the type does not change).
		out.Details = proto.CloneOf(seg.GetIndexDetails())
		out.Version = uint32(seg.GetIndexVersion())
		return out, nil
	}
	vb, err := index.LoadVectorSegment(ctx, srcStore, true)
	if err != nil {
		return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
	}
	vb.Remap(m)
	if out.Files, err = vb.Finish(ctx, dst); err != nil {
		return RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
	}
	// Lance records default VectorIndexDetails and VECTOR_INDEX_VERSION
	// (3) for a remapped vector segment; the manifest entry keeps its own.
	out.Details = &anypb.Any{TypeUrl: index.VectorDetailsURL}
	out.Version = vectorIndexVersion
	return out, nil
}

// vectorIndexVersion is Lance's VECTOR_INDEX_VERSION (the v3 layout).
const vectorIndexVersion = 3

// applyRewrittenIndices gives each rewritten index entry of sec its new
// uuid (and files) and moves its fragment bitmap from each group's old
// fragments to its new ones (Lance's handle_rewrite_indices).
func applyRewrittenIndices(sec *tablepb.IndexSection, rewritten []RewrittenIndex, groups []*tablepb.Transaction_Rewrite_RewriteGroup) error {
	seen := map[string]bool{}
	for _, ri := range rewritten {
		old := string(ri.Old.GetUuid().GetUuid())
		if seen[old] {
			return errorf(ErrInvalidInput, "lance: index %s rewritten twice in one compaction", FormatUUID(ri.Old.GetUuid().GetUuid()))
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
			return retryableConflict("index %s was replaced by a concurrent write", FormatUUID(ri.Old.GetUuid().GetUuid()))
		}
		if entry.GetFragmentBitmap() == nil {
			return errorf(ErrInvalidInput, "lance: index %s has no fragment bitmap; it cannot be rewritten", entry.GetName())
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
				return errorf(ErrInvalidInput, "lance: a rewrite group mixes fragments index %s covers with ones it does not", entry.GetName())
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
	setIndexFiles(meta, files)
	meta.ProtoReflect().SetUnknown(append(keep, meta.ProtoReflect().GetUnknown()...))
}
