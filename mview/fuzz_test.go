package mview

import (
	"context"
	"errors"
	"testing"

	nserr "github.com/lancecat/lancecat/errors"
)

// FuzzParse: any text either parses (and then plans or fails with InvalidInput over the sales
// schema, and a plan runs) or fails with InvalidInput naming a position inside the text; nothing
// panics; an aggregate plan that can merge gives the same answer run over both batches at once
// and continued from the first batch's group state over the second.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT region, count(*) AS n FROM sales WHERE price > 1 GROUP BY region HAVING sum(qty) > 2 ORDER BY n DESC NULLS LAST LIMIT 3 OFFSET 1",
		"SELECT count(DISTINCT region) FROM ns.sales",
		"SELECT qty * 2 q FROM `sales` s ORDER BY 1",
		"SELECT a FROM t JOIN u", "SELECT (SELECT 1) FROM t", "SELECT 'x FROM t", "select min(price), max(region) from sales group by qty",
	} {
		f.Add(s)
	}
	schema, recs := sales(&testing.T{})
	f.Fuzz(func(t *testing.T, sql string) {
		q, err := Parse(sql)
		if err != nil {
			var se *SyntaxError
			var ne *nserr.Error
			if !errors.As(err, &ne) || ne.Code != nserr.InvalidInput {
				t.Fatalf("%q: %v is not InvalidInput", sql, err)
			}
			if errors.As(err, &se) && (se.Pos < 0 || se.Pos > len(sql)) {
				t.Fatalf("%q: position %d outside the text", sql, se.Pos)
			}
			return
		}
		p, err := NewPlan(q, schema)
		if err != nil {
			var ne *nserr.Error
			if !errors.As(err, &ne) || ne.Code != nserr.InvalidInput {
				t.Fatalf("%q: plan: %v is not InvalidInput", sql, err)
			}
			return
		}
		ctx := context.Background()
		rec, err := p.Run(ctx, &sliceBatches{recs: recs}, false)
		if err != nil {
			return
		}
		defer rec.Release()
		// An aggregate view that can merge: continuing from the state of the first batch over
		// the second gives exactly one run's answer (the incremental refresh's invariant).
		if !p.agg || p.mergeBlocker() != "" {
			return
		}
		_, st, err := p.RunState(ctx, &sliceBatches{recs: recs[:1]}, false, nil, true)
		if err != nil {
			t.Fatalf("%q: first half: %v", sql, err)
		}
		defer st.Release()
		merged, _, err := p.RunState(ctx, &sliceBatches{recs: recs[1:]}, false, st, false)
		if err != nil {
			t.Fatalf("%q: second half from the state: %v", sql, err)
		}
		defer merged.Release()
		if got, want := render(merged), render(rec); got != want {
			t.Fatalf("%q: merged %q, one run %q", sql, got, want)
		}
	})
}
