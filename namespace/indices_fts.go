package namespace

// The full-text index (Lance's INVERTED, LanceDB's FTS) of create_table_index.

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
)

// createFTSIndex builds an INVERTED index on req.Column.
func (h *TableHandle) createFTSIndex(_ context.Context, _ CreateIndexRequest) (uint64, error) {
	return 0, nserr.Unsupportedf("index type FTS is not supported yet (full-text indices are issue 16's follow-up); scalar types are BTREE, BITMAP and LABEL_LIST")
}
