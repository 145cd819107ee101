package tableindex

// Vector indices (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT/SQ/PQ) in Lance's own format: training,
// the CreateIndex commit, and opening a segment for the query engine.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// VectorIndexOptions describe a vector index to build. Zero values mean
// LanceDB's defaults.
type VectorIndexOptions struct {
	// Column is the indexed (top-level) fixed-size-list<float> column.
	Column string
	Kind   index.VectorKind
	// Metric defaults to l2.
	Metric index.Metric
	// NumPartitions defaults to LanceDB's choice from the row count.
	NumPartitions int
	// NumSubVectors (IVF_PQ) defaults to LanceDB's choice from the dim.
	NumSubVectors int
	// NumBits (IVF_PQ) is 8 (the only width Lance's PQ reads).
	NumBits int
	// MaxIterations of k-means (default 50).
	MaxIterations int
	// SampleRate: training samples per centroid (default 256).
	SampleRate int
	// M and EfConstruction (IVF_HNSW_*): the graph's neighbors per node and
	// build breadth (default 20 and 300, LanceDB's).
	M, EfConstruction int
	// Name defaults to "<column>_idx".
	Name string
	// Replace replaces an index of the same name; without it an existing
	// name is ErrIndexExists.
	Replace bool
	// Seed makes training deterministic (the same seed, the same index).
	Seed int64
}

// CreateVectorIndex trains a vector index on the column at the latest
// version, writes its files under _indices/<uuid>/ and commits it.
//
// Training reads the column twice and never holds it whole: the first
// scan keeps a seeded reservoir sample of the size Lance trains on
// (num_partitions × sample_rate vectors for the partitions, 256 ×
// sample_rate for PQ), the second assigns every row to its partition
// (and PQ code). Null vectors are not indexed, as with Lance.
func CreateVectorIndex(ctx context.Context, d *lance.Dataset, opts VectorIndexOptions) (*lance.Version, error) {
	t, bo, err := planVectorIndex(ctx, d, opts)
	if err != nil {
		return nil, err
	}
	head := t.head
	sample, err := sampleVectors(ctx, d, head, t.field.GetName(), bo.Dim, bo.SampleSize(int(lance.LiveRows(head))), uint64(opts.Seed))
	if err != nil {
		return nil, err
	}
	reportIndexProgress(ctx, PhaseTraining, 0, 0)
	bld, err := index.TrainVector(ctx, sample, bo)
	if err != nil {
		if errors.Is(err, index.ErrNotEnoughRows) {
			return nil, lance.Errorf(lance.ErrInvalidInput, "lance: %s index on %q: %v", opts.Kind, opts.Column, err)
		}
		return nil, err
	}
	// The scan decodes the next batch while the previous one is assigned
	// (one consumer, so rows reach the partitions in scan order).
	type batch struct {
		vecs []float32
		ids  []uint64
	}
	total := lance.LiveRows(head)
	var assigned int64
	reportIndexProgress(ctx, PhaseAssigning, 0, total)
	batches := make(chan batch, 2)
	added := make(chan struct{})
	go func() {
		defer close(added)
		for b := range batches {
			bld.Add(b.vecs, b.ids)
		}
	}()
	err = scanVectors(ctx, d, head, t.field.GetName(), bo.Dim, func(vecs []float32, ids []uint64) error {
		select {
		case batches <- batch{slices.Clone(vecs), slices.Clone(ids)}:
			assigned += int64(len(ids))
			reportIndexProgress(ctx, PhaseAssigning, assigned, total)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(batches)
	<-added
	if err != nil {
		return nil, err
	}
	reportIndexProgress(ctx, PhaseWriting, 0, 0)
	files, err := bld.Finish(ctx, t.store(d))
	if err != nil {
		return nil, err
	}
	return commitIndex(ctx, d, t, files, &anypb.Any{TypeUrl: index.VectorDetailsURL, Value: bld.Details()}, 1, time.Time{})
}

// CheckVectorIndex checks what CreateVectorIndex checks before reading
// any data (a writable table, the column a vector, the name, the
// parameters), so a build run in the background refuses bad requests up
// front; nil when the build may start.
func CheckVectorIndex(ctx context.Context, d *lance.Dataset, opts VectorIndexOptions) error {
	_, _, err := planVectorIndex(ctx, d, opts)
	return err
}

// planVectorIndex resolves a vector build against the latest version:
// its target and its training parameters.
func planVectorIndex(ctx context.Context, d *lance.Dataset, opts VectorIndexOptions) (*indexTarget, index.VectorBuildOptions, error) {
	t, err := prepareIndex(ctx, d, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return nil, index.VectorBuildOptions{}, err
	}
	fsl, ok := t.arrow.Type.(*arrow.FixedSizeListType)
	if !ok || fsl.Elem().ID() != arrow.FLOAT32 {
		return nil, index.VectorBuildOptions{}, lance.Errorf(lance.ErrInvalidInput, "lance: a %s index needs a vector column (fixed_size_list<float32>); column %q is %s", opts.Kind, opts.Column, t.arrow.Type)
	}
	bo, err := index.VectorBuildOptions{
		Kind: opts.Kind, Metric: opts.Metric, Dim: int(fsl.Len()),
		NumPartitions: opts.NumPartitions, NumSubVectors: opts.NumSubVectors,
		MaxIterations: opts.MaxIterations, SampleRate: opts.SampleRate, Seed: uint64(opts.Seed),
		M: opts.M, EfConstruction: opts.EfConstruction,
	}.Resolve(int(lance.LiveRows(t.head)))
	if err != nil {
		return nil, index.VectorBuildOptions{}, lance.Errorf(lance.ErrInvalidInput, "lance: %v", err)
	}
	if opts.NumBits != 0 && opts.NumBits != 8 {
		return nil, index.VectorBuildOptions{}, lance.Errorf(lance.ErrInvalidInput, "lance: num_bits %d is not supported (8)", opts.NumBits)
	}
	return t, bo, nil
}

// scanVectors streams the non-null vectors of column with their row ids.
func scanVectors(ctx context.Context, d *lance.Dataset, v *lance.Version, column string, dim int, fn func(vecs []float32, ids []uint64) error) error {
	sc, err := d.Scan(ctx, lance.ScanOptions{Columns: []string{column}, At: v, WithRowID: true})
	if err != nil {
		return err
	}
	defer sc.Release()
	var vecs []float32
	var ids []uint64
	for sc.Next() {
		rec := sc.RecordBatch()
		col, ok := rec.Column(0).(*array.FixedSizeList)
		rid, ok2 := rec.Column(1).(*array.Uint64)
		if !ok || !ok2 {
			return fmt.Errorf("lance: scan of %q returned %s and %s", column, rec.Column(0).DataType(), rec.Column(1).DataType())
		}
		vals, ok := col.ListValues().(*array.Float32)
		if !ok {
			return fmt.Errorf("lance: vector column %q holds %s", column, col.ListValues().DataType())
		}
		all := vals.Float32Values()
		base := col.Offset() * dim
		vecs, ids = vecs[:0], ids[:0]
		for i := range col.Len() {
			if col.IsNull(i) {
				continue
			}
			vecs = append(vecs, all[base+i*dim:base+(i+1)*dim]...)
			ids = append(ids, rid.Value(i))
		}
		if len(ids) > 0 {
			if err := fn(vecs, ids); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// sampleVectors is a uniformly random sample of at most n vectors of
// column (Algorithm R over one scan, then shuffled, both from the seed),
// so training never holds more than n vectors. The buffer reserved up
// front is for at most the version's rows, whatever n says (n comes from
// a request's sample_rate).
func sampleVectors(ctx context.Context, d *lance.Dataset, v *lance.Version, column string, dim, n int, seed uint64) ([]float32, error) {
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65))
	n = max(0, min(n, int(lance.LiveRows(v))))
	sample := make([]float32, 0, n*dim)
	seen := 0
	total := lance.LiveRows(v)
	err := scanVectors(ctx, d, v, column, dim, func(vecs []float32, ids []uint64) error {
		defer func() { reportIndexProgress(ctx, PhaseSampling, int64(seen), total) }()
		for i := range ids {
			x := vecs[i*dim : (i+1)*dim]
			if len(sample) < n*dim {
				sample = append(sample, x...)
			} else if j := rng.IntN(seen + 1); j < n {
				copy(sample[j*dim:(j+1)*dim], x)
			}
			seen++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows := len(sample) / dim
	tmp := make([]float32, dim)
	for i := rows - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		copy(tmp, sample[i*dim:(i+1)*dim])
		copy(sample[i*dim:(i+1)*dim], sample[j*dim:(j+1)*dim])
		copy(sample[j*dim:(j+1)*dim], tmp)
	}
	return sample, nil
}

// OpenVectorIndex opens one segment of an IVF_FLAT or IVF_PQ index of v
// (built by lancecat or by any Lance writer), from the reader cache when
// a query opened it before. The caller closes it.
func OpenVectorIndex(ctx context.Context, d *lance.Dataset, v *lance.Version, seg *tablepb.IndexMetadata) (index.VectorReader, error) {
	if seg.GetIndexDetails().GetTypeUrl() != index.VectorDetailsURL {
		return nil, fmt.Errorf("%w: index %q of type %s is not a vector index", lance.ErrUnsupportedFeature, seg.GetName(), seg.GetIndexDetails().GetTypeUrl())
	}
	store, err := d.BaseStore(v, seg.BaseId)
	if err != nil {
		return nil, err
	}
	r, release, err := readerCache.acquire(ctx, cacheKey(d, seg, "vector"), segmentBytes(seg), func() (any, func() error, error) {
		r, err := index.OpenVector(ctx, index.BucketStore(store, lance.IndexDir(seg)))
		if err != nil {
			return nil, nil, err
		}
		return r, r.Close, nil
	})
	if err != nil {
		return nil, err
	}
	return cachedVectorReader{r.(index.VectorReader), release}, nil
}

// cachedVectorReader is a shared reader whose Close releases the
// caller's reference (the cache closes the reader itself).
type cachedVectorReader struct {
	index.VectorReader
	release func() error
}

func (r cachedVectorReader) Close() error { return r.release() }

// VectorIndexFor names the vector index of column in v and its segments
// ("" and nil when the column has none).
func VectorIndexFor(v *lance.Version, column string) (name string, segs []*tablepb.IndexMetadata, err error) {
	field, err := lance.FieldByPath(v.Fields(), column)
	if err != nil {
		return "", nil, err
	}
	for _, idx := range v.Indices() {
		if lance.IsSystemIndex(idx) || idx.GetIndexDetails().GetTypeUrl() != index.VectorDetailsURL {
			continue
		}
		if f := idx.GetFields(); len(f) == 1 && f[0] == field.GetId() {
			name = idx.GetName()
			break
		}
	}
	if name == "" {
		return "", nil, nil
	}
	return name, segmentsNamed(v, name), nil
}

// vectorStatsType refines a vector index's "VECTOR" type to its kind
// (IVF_PQ, IVF_FLAT) and distance type, from its index_details alone;
// other types pass through.
func vectorStatsType(seg *tablepb.IndexMetadata, typ string) (string, string) {
	if seg.GetIndexDetails().GetTypeUrl() != index.VectorDetailsURL {
		return typ, ""
	}
	kind, metric := index.ParseVectorDetails(seg.GetIndexDetails().GetValue())
	if kind == "" {
		return typ, string(metric)
	}
	return string(kind), string(metric)
}
