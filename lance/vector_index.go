package lance

// Vector indices (IVF_FLAT, IVF_PQ) in Lance's own format: training,
// the CreateIndex commit, and opening a segment for the query engine.

import (
	"context"
	"fmt"

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
func (d *Dataset) CreateVectorIndex(ctx context.Context, opts VectorIndexOptions) (*Version, error) {
	return nil, fmt.Errorf("%w: vector index %s", index.ErrUnsupported, opts.Kind)
}

// OpenVectorIndex opens one segment of an IVF_FLAT or IVF_PQ index of v
// (built by lancecat or by any Lance writer).
func (d *Dataset) OpenVectorIndex(ctx context.Context, v *Version, seg *tablepb.IndexMetadata) (index.VectorReader, error) {
	if seg.GetIndexDetails().GetTypeUrl() != index.VectorDetailsURL {
		return nil, fmt.Errorf("%w: index %q of type %s is not a vector index", ErrUnsupportedFeature, seg.GetName(), seg.GetIndexDetails().GetTypeUrl())
	}
	store, err := d.baseStore(v, seg.BaseId)
	if err != nil {
		return nil, err
	}
	return index.OpenVector(ctx, index.BucketStore(store, IndexDir(seg)))
}

// VectorIndexFor names the vector index of column in v and its segments
// ("" and nil when the column has none).
func (v *Version) VectorIndexFor(column string) (name string, segs []*tablepb.IndexMetadata, err error) {
	field, err := fieldByPath(v.Fields(), column)
	if err != nil {
		return "", nil, err
	}
	for _, idx := range v.Indices() {
		if isSystemIndex(idx) || idx.GetIndexDetails().GetTypeUrl() != index.VectorDetailsURL {
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
	return name, v.segmentsNamed(name), nil
}
