package tableindex

// Index optimization, as Lance's optimize_indices (rust/lance/src/index.rs
// and index/append.rs merge_indices) does it for the index types lancecat
// reads and writes:
//
//   - the fragments no segment of an index covers are its unindexed
//     fragments; an index with none is up to date and left alone;
//   - a scalar index (BTREE, BITMAP, LABEL_LIST) has no delta segments in
//     Lance: ScalarIndex::update writes one new segment holding the old
//     segment's rows and the unindexed rows, which replaces it (covering
//     the old bitmap and the unindexed fragments);
//   - a vector index (IVF_FLAT, IVF_PQ): the unindexed vectors are
//     assigned to the existing partitions and encoded with the existing
//     codebook (nothing is retrained) and written with the rows of its
//     newest segment as one new segment replacing it (num_indices_to_merge
//     = 1: what the SDKs' optimize() leaves, one segment, measured with
//     0.31.0 and 0.39.0 in maintenance/optimize_sdk_test.go); with
//     VectorDeltas the new rows are a delta segment of their own
//     (OptimizeOptions::append); an index with more than MaxDeltas
//     segments has them all merged into one;
//   - one CreateIndex transaction commits it all: new_indices lists the
//     new segments and the segments kept (Lance re-lists them, since a
//     CreateIndex replaces every segment of the names it registers),
//     removed_indices the replaced ones; each new segment records the read
//     version as dataset_version.
//
// INVERTED: index_optimize_fts.go. Other types (NGRAM, HNSW variants, …)
// are skipped with the reason.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// DefaultMaxIndexDeltas is how many segments a vector index may have
// before optimize merges them (the seed system's health check reports
// more than 4 delta indices).
const DefaultMaxIndexDeltas = 4

// OptimizeIndicesOptions tune OptimizeIndices.
type OptimizeIndicesOptions struct {
	// Names limits the indices optimized (nil: every user index).
	Names []string
	// MaxDeltas: 0 is DefaultMaxIndexDeltas.
	MaxDeltas int
	// VectorDeltas adds a vector index's new rows as a delta segment
	// instead of merging them into its newest segment.
	VectorDeltas bool
	// DryRun plans without writing.
	DryRun bool
	// Now overrides created_at (tests).
	Now time.Time
}

// Index optimization outcomes.
const (
	IndexOptimized = "optimized"
	IndexUpToDate  = "up_to_date"
	IndexWouldDo   = "would_optimize"
	IndexSkipped   = "skipped"
)

// IndexOptimizeResult is what optimize did to one index.
type IndexOptimizeResult struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// UnindexedFragments and UnindexedRows were added (or would be).
	UnindexedFragments int    `json:"unindexed_fragments,omitempty"`
	UnindexedRows      uint64 `json:"unindexed_rows,omitempty"`
	SegmentsBefore     int    `json:"segments_before"`
	SegmentsAfter      int    `json:"segments_after"`
	// SegmentsMerged are the old segments replaced by the new one.
	SegmentsMerged int `json:"segments_merged,omitempty"`
}

// OptimizeIndicesReport is one OptimizeIndices call.
type OptimizeIndicesReport struct {
	ReadVersion uint64
	// Version is the committed version (0: nothing committed).
	Version uint64
	Indices []IndexOptimizeResult
}

// OptimizeIndices adds the unindexed fragments of the latest version to
// its indices (see above) and commits the new segments.
func OptimizeIndices(ctx context.Context, d *lance.Dataset, opts OptimizeIndicesOptions) (OptimizeIndicesReport, error) {
	head, err := d.OpenLatest(ctx)
	if err != nil {
		return OptimizeIndicesReport{}, err
	}
	if err := lance.CheckWritable(head.Manifest()); err != nil {
		return OptimizeIndicesReport{}, err
	}
	if opts.MaxDeltas <= 0 {
		opts.MaxDeltas = DefaultMaxIndexDeltas
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	rep := OptimizeIndicesReport{ReadVersion: head.Number()}
	var names []string
	byName := map[string][]*tablepb.IndexMetadata{}
	for _, idx := range head.Indices() {
		if lance.IsSystemIndex(idx) || (opts.Names != nil && !slices.Contains(opts.Names, idx.GetName())) {
			continue
		}
		if _, ok := byName[idx.GetName()]; !ok {
			names = append(names, idx.GetName())
		}
		byName[idx.GetName()] = append(byName[idx.GetName()], idx)
	}
	op := &lance.OptimizeIndices{}
	for _, name := range names {
		segs := byName[name]
		res, created, removed, err := optimizeOne(ctx, d, head, segs, opts)
		if err != nil {
			return rep, fmt.Errorf("index %s: %w", name, err)
		}
		rep.Indices = append(rep.Indices, res)
		if created == nil {
			continue
		}
		op.Created = append(op.Created, created)
		op.Removed = append(op.Removed, removed...)
		for _, s := range segs {
			if !slices.Contains(removed, s) {
				op.Kept = append(op.Kept, s)
			}
		}
	}
	if len(op.Created) == 0 {
		return rep, nil
	}
	v, err := d.Commit(ctx, op, lance.CommitOptions{ReadVersion: head.Number()})
	if err != nil {
		return rep, err
	}
	rep.Version = v.Number()
	return rep, nil
}

// unindexedFragments are the fragments of v no segment covers, with their
// live rows.
func unindexedFragments(v *lance.Version, segs []*tablepb.IndexMetadata) ([]uint64, uint64, error) {
	covered, err := coveredFragments(segs)
	if err != nil {
		return nil, 0, err
	}
	var ids []uint64
	var rows uint64
	for _, f := range v.Manifest().GetFragments() {
		if covered[uint32(f.GetId())] {
			continue
		}
		ids = append(ids, f.GetId())
		rows += f.GetPhysicalRows() - min(f.GetPhysicalRows(), f.GetDeletionFile().GetNumDeletedRows())
	}
	return ids, rows, nil
}

// optimizeOne plans and writes one index's new segment (nil when there is
// nothing to do or it is skipped).
func optimizeOne(ctx context.Context, d *lance.Dataset, v *lance.Version, segs []*tablepb.IndexMetadata, opts OptimizeIndicesOptions) (IndexOptimizeResult, *tablepb.IndexMetadata, []*tablepb.IndexMetadata, error) {
	last := segs[len(segs)-1]
	res := IndexOptimizeResult{Name: last.GetName(), SegmentsBefore: len(segs), SegmentsAfter: len(segs)}
	res.Type, _ = vectorStatsType(last, index.TypeName(last.GetIndexDetails().GetTypeUrl()))
	for _, s := range segs {
		if s.GetFragmentBitmap() == nil {
			res.Status, res.Reason = IndexSkipped, "a segment has no fragment bitmap (written by an old Lance): its coverage is unknown"
			return res, nil, nil, nil
		}
	}
	frags, rows, err := unindexedFragments(v, segs)
	if err != nil {
		return res, nil, nil, err
	}
	res.UnindexedFragments, res.UnindexedRows = len(frags), rows
	if len(frags) == 0 {
		res.Status = IndexUpToDate
		return res, nil, nil, nil
	}
	url := last.GetIndexDetails().GetTypeUrl()
	_, scalar := remappableScalar[url]
	fts := isFTSSegment(last) // index_optimize_fts.go
	vector := false
	if !scalar && !fts {
		if ok, why := CanRemapIndex(last); !ok || url != index.VectorDetailsURL {
			res.Status, res.Reason = IndexSkipped, "lancecat cannot add rows to this index yet: "+why
			if index.TypeName(url) == "FTS" {
				res.Reason = "lancecat cannot add rows to an INVERTED (full-text) index yet; its unindexed rows are searched by a flat scan"
			}
			return res, nil, nil, nil
		}
		vector = true
	}
	if len(last.GetFields()) != 1 {
		res.Status, res.Reason = IndexSkipped, "an index over several columns"
		return res, nil, nil, nil
	}
	field := lance.FieldByID(v.Fields(), last.GetFields()[0])
	if field == nil || field.GetParentId() != -1 {
		res.Status, res.Reason = IndexSkipped, "the indexed column is not a top-level column of the schema"
		return res, nil, nil, nil
	}
	if opts.DryRun {
		res.Status = IndexWouldDo
		return res, nil, nil, nil
	}
	id := uuid.New()
	dst := index.BucketStore(d.Store(), lance.IndicesDir+id.String()+"/")
	var files []index.File
	var removed []*tablepb.IndexMetadata
	bitmapFrom := []*tablepb.IndexMetadata{}
	details, version := proto.CloneOf(last.GetIndexDetails()), last.GetIndexVersion()
	if scalar {
		files, err = updateScalar(ctx, d, v, segs, field.GetName(), frags, dst)
		removed = segs
	} else if fts {
		files, err = updateFTS(ctx, d, v, segs, field.GetName(), frags, dst)
		removed, version = segs, 0 // lancecat's layout: index_version 0
	} else if vector {
		switch {
		case len(segs)+1 > opts.MaxDeltas:
			removed = segs
		case !opts.VectorDeltas:
			removed = segs[len(segs)-1:]
		}
		files, err = updateVector(ctx, d, v, segs[len(segs)-1], removed, field.GetName(), frags, dst)
	}
	if errors.Is(err, index.ErrUnsupported) || errors.Is(err, lance.ErrUnsupportedFeature) {
		// A layout lancecat does not read or write (found on reading it).
		res.Status, res.Reason = IndexSkipped, err.Error()
		return res, nil, nil, nil
	}
	if err != nil {
		return res, nil, nil, err
	}
	bitmapFrom = append(bitmapFrom, removed...)
	ids := make([]uint32, 0, len(frags))
	for _, f := range frags {
		ids = append(ids, uint32(f))
	}
	covered, err := coveredFragments(bitmapFrom)
	if err != nil {
		return res, nil, nil, err
	}
	for f := range covered {
		ids = append(ids, f)
	}
	slices.Sort(ids)
	bm, err := index.EncodeFragmentBitmap(slices.Compact(ids))
	if err != nil {
		return res, nil, nil, err
	}
	meta := &tablepb.IndexMetadata{
		Uuid:           &tablepb.UUID{Uuid: id[:]},
		Fields:         slices.Clone(last.GetFields()),
		Name:           last.GetName(),
		DatasetVersion: v.Number(),
		FragmentBitmap: bm,
		IndexDetails:   details,
		IndexVersion:   proto.Int32(version),
		CreatedAt:      proto.Uint64(uint64(opts.Now.UnixMilli())),
	}
	lance.SetIndexFiles(meta, files)
	res.Status = IndexOptimized
	res.SegmentsMerged = len(removed)
	res.SegmentsAfter = len(segs) - len(removed) + 1
	return res, meta, removed, nil
}

// updateScalar writes one segment with every old segment's rows and the
// unindexed fragments' rows (Lance's ScalarIndex::update).
func updateScalar(ctx context.Context, d *lance.Dataset, v *lance.Version, segs []*tablepb.IndexMetadata, column string, frags []uint64, dst index.Store) ([]index.File, error) {
	t := remappableScalar[segs[0].GetIndexDetails().GetTypeUrl()]
	first, err := d.BaseStore(v, segs[0].BaseId)
	if err != nil {
		return nil, err
	}
	info, err := index.InspectScalar(ctx, t, index.BucketStore(first, lance.IndexDir(segs[0])))
	if err != nil {
		return nil, err
	}
	rb, err := index.NewScalarRebuild(t, info.ValueType, index.BuildOptions{BatchSize: info.BatchSize})
	if err != nil {
		return nil, err
	}
	for _, s := range segs {
		if remappableScalar[s.GetIndexDetails().GetTypeUrl()] != t {
			return nil, fmt.Errorf("%w: segments of different types", lance.ErrCorruptManifest)
		}
		st, err := d.BaseStore(v, s.BaseId)
		if err != nil {
			return nil, err
		}
		if err := rb.AddSegment(ctx, index.BucketStore(st, lance.IndexDir(s)), nil); err != nil {
			return nil, err
		}
	}
	// The new rows by what the old segments record them by: their row ids, or (an index of row
	// addresses, lance.IndexStoresAddresses) their addresses, so the merged segment is of one domain.
	opts := lance.ScanOptions{Columns: []string{column}, At: v, Fragments: frags, WithRowID: true}
	if lance.IndexStoresAddresses(segs[0]) {
		opts.WithRowID, opts.WithRowAddress = false, true
	}
	sc, err := d.Scan(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer sc.Release()
	for sc.Next() {
		rec := sc.RecordBatch()
		ids, ok := rec.Column(1).(*array.Uint64)
		if !ok {
			return nil, fmt.Errorf("lance: scan returned row identifiers of type %s", rec.Column(1).DataType())
		}
		if err := rb.Add(rec.Column(0), ids.Uint64Values()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rb.Finish(ctx, dst)
}

// updateVector writes one segment with the model of last: the rows of
// the merged segments and the unindexed vectors.
func updateVector(ctx context.Context, d *lance.Dataset, v *lance.Version, last *tablepb.IndexMetadata, merged []*tablepb.IndexMetadata, column string, frags []uint64, dst index.Store) ([]index.File, error) {
	open := func(s *tablepb.IndexMetadata, rows bool) (*index.VectorBuilder, error) {
		st, err := d.BaseStore(v, s.BaseId)
		if err != nil {
			return nil, err
		}
		return index.LoadVectorSegment(ctx, index.BucketStore(st, lance.IndexDir(s)), rows)
	}
	model, err := open(last, false)
	if err != nil {
		return nil, err
	}
	b := model.Empty()
	for _, s := range merged {
		o, err := open(s, true)
		if err != nil {
			return nil, err
		}
		if err := b.Merge(o); err != nil {
			return nil, err
		}
	}
	dim := b.Dim()
	sc, err := d.Scan(ctx, lance.ScanOptions{Columns: []string{column}, At: v, Fragments: frags, WithRowID: true})
	if err != nil {
		return nil, err
	}
	defer sc.Release()
	for sc.Next() {
		rec := sc.RecordBatch()
		col, ok := rec.Column(0).(*array.FixedSizeList)
		rid, ok2 := rec.Column(1).(*array.Uint64)
		if !ok || !ok2 || col.DataType().(*arrow.FixedSizeListType).Len() != int32(dim) {
			return nil, fmt.Errorf("%w: vector column %q is %s, the index has dimension %d", lance.ErrUnsupportedFeature, column, rec.Column(0).DataType(), dim)
		}
		vals, ok := col.ListValues().(*array.Float32)
		if !ok {
			return nil, fmt.Errorf("%w: vector column %q holds %s", lance.ErrUnsupportedFeature, column, col.ListValues().DataType())
		}
		all := vals.Float32Values()
		base := col.Offset() * dim
		var vecs []float32
		var ids []uint64
		for i := range col.Len() {
			if col.IsNull(i) {
				continue // Lance filters null vectors out of the update
			}
			vecs = append(vecs, all[base+i*dim:base+(i+1)*dim]...)
			ids = append(ids, rid.Value(i))
		}
		if len(ids) > 0 {
			b.Add(vecs, ids)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return b.Finish(ctx, dst)
}
