package catalogtest

import (
	"context"
	"errors"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
)

// The index operations of the remote table (H-index): not driven through the wire by the
// conformance suite yet.
var errIndexRemote = errors.New("catalogtest: index operations are not driven remotely yet")

func (t *remoteTable) CreateIndex(context.Context, namespace.CreateIndexRequest) (uint64, error) {
	return 0, errIndexRemote
}

func (t *remoteTable) ListIndices(context.Context, string, *int64) ([]namespace.IndexDescription, error) {
	return nil, errIndexRemote
}

func (t *remoteTable) IndexStats(context.Context, string, *int64, string) (lance.IndexStats, error) {
	return lance.IndexStats{}, errIndexRemote
}

func (t *remoteTable) DropIndex(context.Context, string, string) (uint64, error) {
	return 0, errIndexRemote
}
