package tableindex

// Scalar indices in Lance's own format: the CreateIndex transaction, and
// listing, describing, opening and dropping the indices of a version.

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

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
	// RowsPerZone is the rows per zone of a ZONEMAP (0: Lance's 8192).
	RowsPerZone int
}

// CreateScalarIndex trains a scalar index on the column at the latest
// version, writes its files under _indices/<uuid>/ and commits it as a
// new version (Lance's CreateIndex). Rows appended meanwhile stay
// unindexed, as with Lance.
func CreateScalarIndex(ctx context.Context, d *lance.Dataset, opts ScalarIndexOptions) (*lance.Version, error) {
	t, err := prepareIndex(ctx, d, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return nil, err
	}
	bld, err := index.NewBuilder(opts.Type, t.arrow.Type, index.BuildOptions{Mem: opts.Mem, BatchSize: opts.BatchSize, RowsPerZone: opts.RowsPerZone})
	if err != nil {
		return nil, lance.Errorf(lance.ErrInvalidInput, "lance: cannot build a %s index on column %q of type %s: %w", opts.Type, opts.Column, t.arrow.Type, err)
	}
	// The zoned types are trained on row addresses (Lance's
	// TrainingOrdering::Addresses), the others on row ids.
	byAddr := opts.Type.UsesAddresses()
	sc, err := d.Scan(ctx, lance.ScanOptions{Columns: []string{t.field.GetName()}, At: t.head, WithRowID: !byAddr, WithRowAddress: byAddr, Mem: opts.Mem})
	if err != nil {
		return nil, err
	}
	total, scanned := lance.LiveRows(t.head), int64(0)
	reportIndexProgress(ctx, PhaseScanning, 0, total)
	for sc.Next() {
		rec := sc.RecordBatch()
		scanned += rec.NumRows()
		reportIndexProgress(ctx, PhaseScanning, scanned, total)
		ids, ok := rec.Column(1).(*array.Uint64)
		if !ok {
			sc.Release()
			return nil, fmt.Errorf("lance: scan returned row ids of type %s", rec.Column(1).DataType())
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
	return commitIndex(ctx, d, t, files, &anypb.Any{TypeUrl: opts.Type.DetailsURL()}, opts.Type.IndexVersion(), opts.Now)
}

// CheckScalarIndex checks what CreateScalarIndex checks before reading
// any data (a writable table, the column, its type for the index type,
// the name), so a build run in the background refuses bad requests up
// front; nil when the build may start.
func CheckScalarIndex(ctx context.Context, d *lance.Dataset, opts ScalarIndexOptions) error {
	t, err := prepareIndex(ctx, d, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return err
	}
	if _, err := index.NewBuilder(opts.Type, t.arrow.Type, index.BuildOptions{Mem: opts.Mem, BatchSize: opts.BatchSize, RowsPerZone: opts.RowsPerZone}); err != nil {
		return lance.Errorf(lance.ErrInvalidInput, "lance: cannot build a %s index on column %q of type %s: %w", opts.Type, opts.Column, t.arrow.Type, err)
	}
	return nil
}

// CheckIndexTarget checks what every index build checks before reading
// any data (a writable table, a top-level column that exists, a name
// that is not reserved nor, unless replace, taken): the up-front check
// of a build whose own checks run later (full text).
func CheckIndexTarget(ctx context.Context, d *lance.Dataset, column, name string, replace bool) error {
	_, err := prepareIndex(ctx, d, column, name, replace)
	return err
}

// segmentsNamed are the segments of the named user index.
func segmentsNamed(v *lance.Version, name string) []*tablepb.IndexMetadata {
	var out []*tablepb.IndexMetadata
	for _, idx := range v.Indices() {
		if idx.GetName() == name && !lance.IsSystemIndex(idx) {
			out = append(out, idx)
		}
	}
	return out
}

// IndexSegments are the segments (delta indices) of the named user index
// of v, in manifest order; ErrIndexNotFound when there are none.
func IndexSegments(v *lance.Version, name string) ([]*tablepb.IndexMetadata, error) {
	segs := segmentsNamed(v, name)
	if len(segs) == 0 {
		return nil, lance.Errorf(lance.ErrIndexNotFound, "lance: index %q not found", name)
	}
	return segs, nil
}

// DropIndex unregisters every segment of the named index (Lance's
// drop_index: a CreateIndex that only removes). The files stay until
// cleanup, as older versions still use them.
func DropIndex(ctx context.Context, d *lance.Dataset, name string) (*lance.Version, error) {
	head, err := d.OpenLatest(ctx)
	if err != nil {
		return nil, err
	}
	segs, err := IndexSegments(head, name)
	if err != nil {
		return nil, err
	}
	return d.Commit(ctx, &lance.CreateIndex{Removed: segs}, lance.CommitOptions{ReadVersion: head.Number()})
}

// IndexStats describes the named index of v, from the manifest alone.
func IndexStats(v *lance.Version, name string) (lance.IndexStats, error) {
	segs, err := IndexSegments(v, name)
	if err != nil {
		return lance.IndexStats{}, err
	}
	st := lance.IndexStats{NumIndices: len(segs), Type: index.TypeName(segs[0].GetIndexDetails().GetTypeUrl())}
	st.Type, st.DistanceType = vectorStatsType(segs[0], st.Type)
	covered, err := coveredFragments(segs)
	if err != nil {
		return lance.IndexStats{}, err
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
			return nil, fmt.Errorf("%w: index %q: fragment bitmap: %v", lance.ErrCorruptManifest, s.GetName(), err)
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
func OpenScalarIndex(ctx context.Context, d *lance.Dataset, v *lance.Version, seg *tablepb.IndexMetadata) (index.Reader, error) {
	t, err := index.ParseType(index.TypeName(seg.GetIndexDetails().GetTypeUrl()))
	if err != nil {
		return nil, fmt.Errorf("%w: index %q of type %s", lance.ErrUnsupportedFeature, seg.GetName(), seg.GetIndexDetails().GetTypeUrl())
	}
	store, err := d.BaseStore(v, seg.BaseId)
	if err != nil {
		return nil, err
	}
	r, release, err := readerCache.acquire(ctx, cacheKey(d, seg, "scalar"), segmentBytes(seg), func() (any, func() error, error) {
		r, err := index.Open(ctx, t, index.BucketStore(store, lance.IndexDir(seg)))
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
