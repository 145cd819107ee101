package query_test

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/query"
)

// count_rows with a filter cuts a fragment into row ranges counted side by side (each task's
// cursor decodes only its own chunks): the counts equal those of a plain filtered scan, including
// filters matching rows on both sides of a task boundary (65536) and none at all.
func TestCountFilterOverRowRanges(t *testing.T) {
	ds := benchTable(t)
	ctx := context.Background()
	for _, filter := range []string{
		"id % 3 = 0 AND s LIKE '%blue'",
		"id >= 65530 AND id < 65545",
		"id >= 131000 AND s LIKE 'row-1310%'",
		"id < 0",
		"s IS NOT NULL",
	} {
		n, err := query.Count(ctx, ds, nil, filter)
		assert.NilError(t, err, filter)
		rr, err := query.Run(ctx, ds, query.Request{Filter: filter, Columns: []string{"id"}})
		assert.NilError(t, err, filter)
		var want uint64
		for rr.Next() {
			want += uint64(rr.RecordBatch().NumRows())
		}
		assert.NilError(t, rr.Err())
		rr.Release()
		assert.Equal(t, n, want, filter)
	}
}
