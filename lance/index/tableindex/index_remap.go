package tableindex

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
// lancecat remaps BTREE, BITMAP, LABEL_LIST, IVF_FLAT/PQ/SQ and IVF_HNSW_* segments
// (built by lancecat or the SDK), INVERTED in index_remap_fts.go. Other types (NGRAM, HNSW, …)
// are not remapped; the compaction planner leaves the fragments they cover
// alone (CanRemapIndex says why), so no index is left pointing at a
// removed fragment.

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// ReserveFragmentIDs commits a ReserveFragments of n ids and answers the
// first one (the ids are first … first+n-1).
func ReserveFragmentIDs(ctx context.Context, d *lance.Dataset, n int) (uint64, error) {
	if n <= 0 || n > 1<<31 {
		return 0, lance.Errorf(lance.ErrInvalidInput, "lance: reserving %d fragment ids", n)
	}
	v, err := d.Commit(ctx, &lance.ReserveFragments{N: uint32(n)}, lance.CommitOptions{})
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
func NewAddrMap(ctx context.Context, d *lance.Dataset, ver *lance.Version, old, newFrags []*tablepb.DataFragment) (*AddrMap, error) {
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
		var dv *lance.DeletionVector
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.BaseStore(ver, del.BaseId)
			if err != nil {
				return nil, err
			}
			if dv, err = lance.ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
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

// remappableScalar are the scalar types RemapIndexSegment rewrites.
var remappableScalar = map[string]index.Type{
	index.BTreeDetailsURL:     index.BTree,
	index.BitmapDetailsURL:    index.Bitmap,
	index.LabelListDetailsURL: index.LabelList,
	// the inexact types: zones and posting lists mapped (inexact_rebuild.go)
	index.ZoneMapDetailsURL:     index.ZoneMap,
	index.BloomFilterDetailsURL: index.BloomFilter,
	index.NGramDetailsURL:       index.NGram,
}

// CanRemapIndex says whether RemapIndexSegment can rewrite seg, and if not
// why.
func CanRemapIndex(seg *tablepb.IndexMetadata) (bool, string) {
	url := seg.GetIndexDetails().GetTypeUrl()
	if _, ok := remappableScalar[url]; ok || isFTSSegment(seg) {
		return true, ""
	}
	if url == index.VectorDetailsURL {
		if kind, _ := index.ParseVectorDetails(seg.GetIndexDetails().GetValue()); kind != "" {
			return true, ""
		}
		return false, fmt.Sprintf("index %s is a vector index lancecat cannot remap (IVF_RQ, or details that do not name its kind)", seg.GetName())
	}
	name := index.TypeName(url)
	if name == "" {
		name = url
	}
	return false, fmt.Sprintf("index %s of type %s cannot be remapped by lancecat yet", seg.GetName(), name)
}

// RemapIndexSegment writes a copy of seg (an index segment of ver) with
// its row ids mapped by m, under a new uuid, as Lance's remap_index does.
func RemapIndexSegment(ctx context.Context, d *lance.Dataset, ver *lance.Version, seg *tablepb.IndexMetadata, m index.RowMap) (lance.RewrittenIndex, error) {
	if isFTSSegment(seg) {
		return remapFTSSegment(ctx, d, ver, seg, m) // index_remap_fts.go
	}
	if ok, why := CanRemapIndex(seg); !ok {
		return lance.RewrittenIndex{}, lance.Errorf(lance.ErrUnsupportedFeature, "lance: %s", why)
	}
	src, err := d.BaseStore(ver, seg.BaseId)
	if err != nil {
		return lance.RewrittenIndex{}, err
	}
	srcStore := index.BucketStore(src, lance.IndexDir(seg))
	id := uuid.New()
	dst := index.BucketStore(d.Store(), lance.IndicesDir+id.String()+"/")
	out := lance.RewrittenIndex{Old: seg, NewID: id}
	url := seg.GetIndexDetails().GetTypeUrl()
	if t, ok := remappableScalar[url]; ok {
		info, err := index.InspectScalar(ctx, t, srcStore)
		if err != nil {
			return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		rb, err := index.NewScalarRebuild(t, info.ValueType, index.BuildOptions{BatchSize: info.BatchSize})
		if err != nil {
			return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		if err := rb.AddSegment(ctx, srcStore, m); err != nil {
			return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		if out.Files, err = rb.Finish(ctx, dst); err != nil {
			return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
		}
		// The scalar remap answers its own details and version (the
		// segment's: the type does not change).
		out.Details = proto.CloneOf(seg.GetIndexDetails())
		out.Version = uint32(seg.GetIndexVersion())
		return out, nil
	}
	vb, err := index.LoadVectorSegment(ctx, srcStore, true)
	if err != nil {
		return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
	}
	vb.Remap(m)
	if out.Files, err = vb.Finish(ctx, dst); err != nil {
		return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
	}
	// Lance records default VectorIndexDetails and VECTOR_INDEX_VERSION
	// (3) for a remapped vector segment; the manifest entry keeps its own.
	out.Details = &anypb.Any{TypeUrl: index.VectorDetailsURL}
	out.Version = vectorIndexVersion
	return out, nil
}

// vectorIndexVersion is Lance's VECTOR_INDEX_VERSION (the v3 layout).
const vectorIndexVersion = 3
