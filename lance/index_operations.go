package lance

// Scalar indices in Lance's own format: the CreateIndex transaction, and
// listing, describing, opening and dropping the indices of a version.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
			return errorf(ErrInvalidInput, "lance: index segment %s is already registered", FormatUUID(idx.GetUuid().GetUuid()))
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

// ScalarIndexOptions describe a scalar index to build.
type ScalarIndexOptions struct {
	// Column is the indexed (top-level) column.
	Column string
	Type   index.Type
	// Name defaults to "<column>_idx".
	Name string
	// Replace replaces an index of the same name; without it an existing
	// name is ErrIndexExists.
	Replace bool
	// Mem allocates the training buffers (nil: Go heap).
	Mem memory.Allocator
	// Now overrides created_at (tests).
	Now time.Time
	// BatchSize is the rows per BTREE page (0: Lance's 4096; tests use
	// small pages).
	BatchSize int
}

// CreateScalarIndex trains a scalar index on the column at the latest
// version, writes its files under _indices/<uuid>/ and commits it as a
// new version (Lance's CreateIndex). Rows appended meanwhile stay
// unindexed, as with Lance.
func (d *Dataset) CreateScalarIndex(ctx context.Context, opts ScalarIndexOptions) (*Version, error) {
	t, err := d.prepareIndex(ctx, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return nil, err
	}
	bld, err := index.NewBuilder(opts.Type, t.arrow.Type, index.BuildOptions{Mem: opts.Mem, BatchSize: opts.BatchSize})
	if err != nil {
		return nil, errorf(ErrInvalidInput, "lance: cannot build a %s index on column %q of type %s: %w", opts.Type, opts.Column, t.arrow.Type, err)
	}
	sc, err := d.Scan(ctx, ScanOptions{Columns: []string{t.field.GetName()}, At: t.head, WithRowID: true, Mem: opts.Mem})
	if err != nil {
		return nil, err
	}
	total, scanned := liveRows(t.head), int64(0)
	reportIndexProgress(ctx, PhaseScanning, 0, total)
	for sc.Next() {
		rec := sc.RecordBatch()
		scanned += rec.NumRows()
		reportIndexProgress(ctx, PhaseScanning, scanned, total)
		ids, ok := rec.Column(1).(*array.Uint64)
		if !ok {
			sc.Release()
			return nil, fmt.Errorf("lance: scan returned _rowid of type %s", rec.Column(1).DataType())
		}
		if err := bld.Add(rec.Column(0), ids.Uint64Values()); err != nil {
			sc.Release()
			return nil, err
		}
	}
	err = sc.Err()
	sc.Release()
	if err != nil {
		return nil, err
	}
	reportIndexProgress(ctx, PhaseWriting, 0, 0)
	files, err := bld.Finish(ctx, t.store(d))
	if err != nil {
		return nil, err
	}
	return d.commitIndex(ctx, t, files, &anypb.Any{TypeUrl: opts.Type.DetailsURL()}, opts.Type.IndexVersion(), opts.Now)
}

// CheckScalarIndex checks what CreateScalarIndex checks before reading
// any data (a writable table, the column, its type for the index type,
// the name), so a build run in the background refuses bad requests up
// front; nil when the build may start.
func (d *Dataset) CheckScalarIndex(ctx context.Context, opts ScalarIndexOptions) error {
	t, err := d.prepareIndex(ctx, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return err
	}
	if _, err := index.NewBuilder(opts.Type, t.arrow.Type, index.BuildOptions{Mem: opts.Mem, BatchSize: opts.BatchSize}); err != nil {
		return errorf(ErrInvalidInput, "lance: cannot build a %s index on column %q of type %s: %w", opts.Type, opts.Column, t.arrow.Type, err)
	}
	return nil
}

// CheckIndexTarget checks what every index build checks before reading
// any data (a writable table, a top-level column that exists, a name
// that is not reserved nor, unless replace, taken): the up-front check
// of a build whose own checks run later (full text).
func (d *Dataset) CheckIndexTarget(ctx context.Context, column, name string, replace bool) error {
	_, err := d.prepareIndex(ctx, column, name, replace)
	return err
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

// setIndexFiles records IndexMetadata.files (field 10, newer than our
// protos: IndexFile{path = 1, size_bytes = 2}) as unknown fields, as
// Lance 8 writes them.
func setIndexFiles(meta *tablepb.IndexMetadata, files []index.File) {
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

// segmentsNamed are the segments of the named user index.
func (v *Version) segmentsNamed(name string) []*tablepb.IndexMetadata {
	var out []*tablepb.IndexMetadata
	for _, idx := range v.Indices() {
		if idx.GetName() == name && !isSystemIndex(idx) {
			out = append(out, idx)
		}
	}
	return out
}

// IndexSegments are the segments (delta indices) of the named user index
// of v, in manifest order; ErrIndexNotFound when there are none.
func (v *Version) IndexSegments(name string) ([]*tablepb.IndexMetadata, error) {
	segs := v.segmentsNamed(name)
	if len(segs) == 0 {
		return nil, errorf(ErrIndexNotFound, "lance: index %q not found", name)
	}
	return segs, nil
}

// DropIndex unregisters every segment of the named index (Lance's
// drop_index: a CreateIndex that only removes). The files stay until
// cleanup, as older versions still use them.
func (d *Dataset) DropIndex(ctx context.Context, name string) (*Version, error) {
	head, err := d.OpenLatest(ctx)
	if err != nil {
		return nil, err
	}
	segs, err := head.IndexSegments(name)
	if err != nil {
		return nil, err
	}
	return d.Commit(ctx, &CreateIndex{Removed: segs}, CommitOptions{ReadVersion: head.Number()})
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

// IndexStats describes the named index of v, from the manifest alone.
func (v *Version) IndexStats(name string) (IndexStats, error) {
	segs, err := v.IndexSegments(name)
	if err != nil {
		return IndexStats{}, err
	}
	st := IndexStats{NumIndices: len(segs), Type: index.TypeName(segs[0].GetIndexDetails().GetTypeUrl())}
	st.Type, st.DistanceType = vectorStatsType(segs[0], st.Type)
	covered, err := coveredFragments(segs)
	if err != nil {
		return IndexStats{}, err
	}
	for _, f := range v.Manifest().GetFragments() {
		live := f.GetPhysicalRows() - min(f.GetPhysicalRows(), f.GetDeletionFile().GetNumDeletedRows())
		if covered[uint32(f.GetId())] {
			st.NumIndexedRows += live
		} else {
			st.NumUnindexedRows += live
		}
	}
	return st, nil
}

// coveredFragments is the union of the segments' fragment bitmaps.
func coveredFragments(segs []*tablepb.IndexMetadata) (map[uint32]bool, error) {
	covered := map[uint32]bool{}
	for _, s := range segs {
		frags, err := index.DecodeFragmentBitmap(s.GetFragmentBitmap())
		if err != nil {
			return nil, fmt.Errorf("%w: index %q: fragment bitmap: %v", ErrCorruptManifest, s.GetName(), err)
		}
		for _, f := range frags {
			covered[f] = true
		}
	}
	return covered, nil
}

// OpenScalarIndex opens one segment of a BTREE, BITMAP or LABEL_LIST
// index of v (built by lancecat or by any Lance writer), from the reader
// cache when a query opened it before.
func (d *Dataset) OpenScalarIndex(ctx context.Context, v *Version, seg *tablepb.IndexMetadata) (index.Reader, error) {
	t, err := index.ParseType(index.TypeName(seg.GetIndexDetails().GetTypeUrl()))
	if err != nil {
		return nil, fmt.Errorf("%w: index %q of type %s", ErrUnsupportedFeature, seg.GetName(), seg.GetIndexDetails().GetTypeUrl())
	}
	store, err := d.baseStore(v, seg.BaseId)
	if err != nil {
		return nil, err
	}
	r, release, err := readerCache.acquire(ctx, d.indexCacheKey(seg, "scalar"), segmentBytes(seg), func() (any, func() error, error) {
		r, err := index.Open(ctx, t, index.BucketStore(store, IndexDir(seg)))
		return r, func() error { return nil }, err
	})
	if err != nil {
		return nil, err
	}
	// Scalar readers hold only memory (nothing to close): the reference
	// is released now and an evicted reader is left to the collector.
	release()
	return r.(index.Reader), nil
}
