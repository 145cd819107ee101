package lance

// Scalar indices in Lance's own format: the CreateIndex transaction, and
// listing, describing, opening and dropping the indices of a version.

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

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
// registered, removed ones unregistered (a replace, or a drop when New is
// empty).
type CreateIndex struct {
	New     []*tablepb.IndexMetadata
	Removed []*tablepb.IndexMetadata
}

func (*CreateIndex) Name() string { return "CreateIndex" }

func (op *CreateIndex) build(_ context.Context, c *buildContext) error {
	return errors.New("lance: CreateIndex: TODO")
}

func (op *CreateIndex) compatible(other *tablepb.Transaction) bool { return false }

// ScalarIndexOptions describe a scalar index to build.
type ScalarIndexOptions struct {
	// Column is the indexed column's path.
	Column string
	Type   index.Type
	// Name defaults to "<column>_idx".
	Name string
	// Replace replaces an index of the same name; without it an existing
	// name is ErrIndexExists.
	Replace bool
	// Mem allocates the training buffers (nil: Go heap).
	Mem memory.Allocator
}

// CreateScalarIndex trains a scalar index on the latest version of the
// column and commits it as a new version.
func (d *Dataset) CreateScalarIndex(ctx context.Context, opts ScalarIndexOptions) (*Version, error) {
	return nil, fmt.Errorf("%w: TODO", ErrUnsupportedFeature)
}

// DropIndex unregisters every segment of the named index.
func (d *Dataset) DropIndex(ctx context.Context, name string) (*Version, error) {
	return nil, fmt.Errorf("%w: TODO", ErrUnsupportedFeature)
}

// IndexStats are what describe_table_index_stats answers.
type IndexStats struct {
	Type             string
	NumIndexedRows   uint64
	NumUnindexedRows uint64
	NumIndices       int
	DistanceType     string
}

// IndexSegments are the segments (delta indices) of the named user index
// of v, in manifest order; ErrIndexNotFound when there are none.
func (v *Version) IndexSegments(name string) ([]*tablepb.IndexMetadata, error) {
	return nil, fmt.Errorf("%w: %s", ErrIndexNotFound, name)
}

// IndexStats describes the named index of v.
func (v *Version) IndexStats(name string) (IndexStats, error) {
	return IndexStats{}, fmt.Errorf("%w: %s", ErrIndexNotFound, name)
}

// OpenScalarIndex opens one segment of a scalar index of v.
func (d *Dataset) OpenScalarIndex(ctx context.Context, v *Version, seg *tablepb.IndexMetadata) (index.Reader, error) {
	return nil, fmt.Errorf("%w: TODO", ErrUnsupportedFeature)
}
