package routing

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// TestBatchAcrossRootsRefused: a batch naming tables of two roots (two warehouses, or a
// warehouse and the catalog root) is refused before anything is written, saying why: the
// transaction's record and claims live in one bucket and no atomic primitive spans two. Tables of
// one warehouse, in different namespaces, are one root: that batch reaches the root (and fails
// there only because nothing is staged).
func TestBatchAcrossRootsRefused(t *testing.T) {
	ctx := context.Background()
	r, _ := testRouter(t)
	_, err := r.CreateNamespace(ctx, ident.ID{"plain"}, nil, catalog.ModeCreate)
	assert.NilError(t, err)
	_, err = r.CreateNamespace(ctx, ident.ID{"b1", "inner"}, nil, catalog.ModeCreate)
	assert.NilError(t, err)
	for _, id := range []ident.ID{{"plain", "t"}, {"b1", "t"}, {"b1", "inner", "t"}, {"b2", "t"}} {
		_, err := r.DeclareTable(ctx, id, "", nil)
		assert.NilError(t, err)
	}
	entry := func(id ...string) catalog.VersionEntry {
		return catalog.VersionEntry{Table: id, NewTableVersion: catalog.NewTableVersion{Version: 1, ManifestPath: "nothing-staged"}}
	}
	for _, pair := range [][2]catalog.VersionEntry{
		{entry("b1", "t"), entry("b2", "t")},
		{entry("plain", "t"), entry("b1", "t")},
	} {
		_, _, err := r.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, pair[:])
		code := nserr.CodeOf(err)
		assert.Equal(t, code, nserr.InvalidInput, "%v", err)
		assert.Assert(t, strings.Contains(err.Error(), "no atomic primitive spans two buckets"), "%v", err)
	}
	_, _, err = r.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{entry("b1", "t"), entry("b1", "inner", "t")})
	assert.Assert(t, err != nil && !strings.Contains(err.Error(), "spans"), "one warehouse is one root: %v", err)
}
