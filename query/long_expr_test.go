package query_test

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/query"
)

// TestLongExpressionsAreAnswered: an expression near the term limit (issue 29) is answered by
// count_rows, a filtered scan and a projection alike, with the answer of its short equivalent.
// The last batches of a count are evaluated after its reading is done; their evaluation looks at
// the request's cancellation (not at the reading's, which ends first) — a count of a long
// expression over one batch failed with "context canceled".
func TestLongExpressionsAreAnswered(t *testing.T) {
	ds := newTable(t, 3000, 1000)
	ctx := context.Background()
	long := strings.Repeat("(id - id) + ", 2000) + "id"
	want, err := query.Count(ctx, ds, nil, "id > 100")
	assert.NilError(t, err)
	for range 5 { // the race with the reading's end is per run
		n, err := query.Count(ctx, ds, nil, long+" > 100")
		assert.NilError(t, err)
		assert.Equal(t, n, want)
	}
	rr, err := query.Run(ctx, ds, query.Request{Filter: long + " > 100", Projection: []query.Projection{{Name: "x", Expr: long}}})
	assert.NilError(t, err)
	var rows uint64
	for rr.Next() {
		rows += uint64(rr.RecordBatch().NumRows())
	}
	assert.NilError(t, rr.Err())
	rr.Release()
	assert.Equal(t, rows, want)
}
