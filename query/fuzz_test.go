package query_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// raceEnabled: the race detector slows the 200,000-row tests past their use.
var raceEnabled bool

var fuzzOnce struct {
	sync.Once
	ds *lance.Dataset
}

// FuzzQuery feeds the text a client controls — filter, a projection
// expression, a column name, an order_by column — to Explain, Run and
// Count: each answers or fails with InvalidInput (or another coded error),
// never panics, and releases what it allocates.
func FuzzQuery(f *testing.F) {
	for _, s := range [][4]string{
		{"id > 5", "id * 2", "name", "score"},
		{"name LIKE 'n1%' AND score IS NOT NULL", "upper(name)", "id", "id"},
		{"id IN (1, 2, 3) OR NOT (score < 3.5)", "CASE WHEN id > 3 THEN 'a' ELSE 'b' END", "vec", "name"},
		{"", "", "", ""},
		{"id >", "(", "nope", "vec"},
		{"`id` = 1", "cast(id as string)", "_rowid", "bv"},
		{"array_has(tags, 'a')", "st.a", "st", "nope"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, filter, proj, column, order string) {
		fuzzOnce.Do(func() { fuzzOnce.ds = newTable(t, 300, 100) })
		ds := fuzzOnce.ds
		ctx := context.Background()
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		reqs := []query.Request{
			{Filter: filter, Columns: []string{column}, OrderBy: []query.OrderBy{{Column: order}}, Limit: 5},
			{Filter: filter, Projection: []query.Projection{{Name: "p", Expr: proj}}, WithRowID: true},
			{Filter: filter, Vector: &query.VectorQuery{Vectors: [][]float32{make([]float32, dim)}, Column: column}, Prefilter: len(proj)%2 == 0,
				OrderBy: []query.OrderBy{{Column: order, Descending: true}}},
		}
		for _, req := range reqs {
			req.Mem = mem
			if _, err := query.Explain(ctx, ds, req, true); err != nil {
				checkCoded(t, err)
				continue
			}
			rr, err := query.Run(ctx, ds, req)
			if err != nil {
				checkCoded(t, err)
				continue
			}
			for rr.Next() {
			}
			if err := rr.Err(); err != nil {
				checkCoded(t, err)
			}
			rr.Release()
		}
		n, err := query.Count(ctx, ds, nil, filter)
		if err != nil {
			checkCoded(t, err)
		} else if rr, err := query.Run(ctx, ds, query.Request{Filter: filter, Columns: []string{"id"}, Mem: mem}); err == nil {
			// count_rows counts TRUE rows on bitmaps (expr.CountTrue): the
			// rows the same filter keeps in a query
			var rows uint64
			for rr.Next() {
				rows += uint64(rr.RecordBatch().NumRows())
			}
			if rr.Err() == nil && rows != n {
				t.Fatalf("count_rows(%q) = %d, the query keeps %d rows", filter, n, rows)
			}
			rr.Release()
		}
		if n := mem.CurrentAlloc(); n != 0 {
			t.Fatalf("%d bytes not released", n)
		}
	})
}

// checkCoded: a failure the client caused carries a spec code (the server
// answers 400, not 500).
func checkCoded(t *testing.T, err error) {
	t.Helper()
	var e *nserr.Error
	if !errors.As(err, &e) && !nserr.Coded(err) {
		t.Fatalf("an error without a code: %v", err)
	}
}
