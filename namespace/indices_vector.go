package namespace

// The vector index types (IVF_FLAT, IVF_PQ, ...) of create_table_index.

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
)

// createVectorIndex builds a vector index of kind (upper case) on req.Column.
func (h *TableHandle) createVectorIndex(_ context.Context, kind string, _ CreateIndexRequest) (uint64, error) {
	return 0, nserr.Unsupportedf("index type %s is not supported yet (vector indices are issue 16's follow-up); scalar types are BTREE, BITMAP and LABEL_LIST", kind)
}
