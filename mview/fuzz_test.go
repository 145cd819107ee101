package mview

import (
	"context"
	"errors"
	"testing"

	nserr "github.com/lancecat/lancecat/errors"
)

// FuzzParse: any text either parses (and then plans or fails with InvalidInput over the sales
// schema, and a plan runs) or fails with InvalidInput naming a position inside the text; nothing
// panics.
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
		rec, err := p.Run(context.Background(), &sliceBatches{recs: recs}, false)
		if err == nil {
			rec.Release()
		}
	})
}
