package table

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestScalarIndexTypesCreate: the inexact scalar types build and are listed with their types
// (BLOOM_FILTER is the remote clients' spelling of BLOOMFILTER); FM and RTREE, which lancecat
// does not write, answer 406 naming the type (not 400 "unknown"); replace false on an existing
// name fails and keeps the index, as embedded Lance does.
func TestScalarIndexTypesCreate(t *testing.T) {
	ctx := context.Background()
	h := oneRowTable(t)
	var ver int64
	for _, typ := range []string{"ZONEMAP", "BLOOM_FILTER"} {
		v, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: typ, Name: "x_" + typ, Replace: true})
		assert.NilError(t, err, typ)
		ver = int64(v)
	}
	list, err := h.ListIndices(ctx, "", &ver)
	assert.NilError(t, err)
	types := map[string]string{}
	for _, d := range list {
		types[d.Name] = d.Type
	}
	assert.Check(t, is.DeepEqual(types, map[string]string{"x_ZONEMAP": "ZONEMAP", "x_BLOOM_FILTER": "BLOOMFILTER"}))

	_, err = h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: "NGRAM"})
	assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput), "NGRAM on an int64 column: %v", err)

	for _, typ := range []string{"FM", "fm", "RTREE"} {
		_, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: typ, Replace: true})
		assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.Unsupported), "%s: %v", typ, err)
		assert.Check(t, is.ErrorContains(err, "index type "), typ)
	}

	_, err = h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: "ZONEMAP", Name: "x_ZONEMAP", Replace: false})
	assert.Check(t, is.ErrorContains(err, "x_ZONEMAP"))
}
