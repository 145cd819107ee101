package query_test

import (
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/query"
)

// TestFullTextSearchWithoutIndex: a full-text search of every indexed column on a table with
// no full-text index is invalid input in Lance's words (the SDK embedded: "Cannot perform full
// text search unless an INVERTED index has been created on at least one column"), with or
// without fast_search; a not-found answer read, through the remote client, as the table not
// being found.
func TestFullTextSearchWithoutIndex(t *testing.T) {
	ds := newTable(t, 100, 40)
	ft, err := query.ParseFullTextQuery([]byte(`{"columns":[],"query":"glacier"}`))
	assert.NilError(t, err)
	_, err = query.Run(t.Context(), ds, query.Request{FullText: ft, Limit: 10})
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
	assert.ErrorContains(t, err, "unless an INVERTED index has been created on at least one column")
}
