package namespace

// The index operations of a table: scalar indices built in Lance's own
// format (lance.Dataset.CreateScalarIndex), listed, described and dropped.

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// CreateIndexRequest is create_table_index / create_table_scalar_index.
type CreateIndexRequest struct {
	Branch string
	Column string
	// IndexType is the client's type name (BTREE, BITMAP, LABEL_LIST;
	// vector types are refused for now).
	IndexType string
	// Name defaults to "<column>_idx".
	Name    string
	Replace bool
}

// IndexDescription is one entry of list_table_indices.
type IndexDescription struct {
	Name    string
	UUID    string
	Type    string
	Columns []string
}

// CreateIndex builds the index and returns the version that registers it.
func (h *TableHandle) CreateIndex(ctx context.Context, req CreateIndexRequest) (uint64, error) {
	return 0, nserr.Unsupportedf("index creation: TODO")
}

// ListIndices lists the user indices of the version.
func (h *TableHandle) ListIndices(ctx context.Context, branch string, version *int64) ([]IndexDescription, error) {
	return nil, nserr.Unsupportedf("index listing: TODO")
}

// IndexStats describes the named index.
func (h *TableHandle) IndexStats(ctx context.Context, branch string, version *int64, name string) (lance.IndexStats, error) {
	return lance.IndexStats{}, nserr.Unsupportedf("index stats: TODO")
}

// DropIndex drops the named index and returns the new version.
func (h *TableHandle) DropIndex(ctx context.Context, branch string, name string) (uint64, error) {
	return 0, nserr.Unsupportedf("index drop: TODO")
}
