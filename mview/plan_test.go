package mview

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
)

type sliceBatches struct {
	recs []arrow.RecordBatch
	i    int
}

func (s *sliceBatches) Next() bool                     { s.i++; return s.i <= len(s.recs) }
func (s *sliceBatches) RecordBatch() arrow.RecordBatch { return s.recs[s.i-1] }
func (s *sliceBatches) Err() error                     { return nil }

// sales is the source of the plan tests: two batches so grouping spans batches.
func sales(t *testing.T) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	mem := testenv.CheckedAllocator(t)
	mk := func(regions []string, qty []int32, price []float64) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).AppendValues(regions, nil)
		b.Field(1).(*array.Int32Builder).AppendValues(qty, nil)
		b.Field(2).(*array.Float64Builder).AppendValues(price, nil)
		return b.NewRecordBatch()
	}
	recs := []arrow.RecordBatch{
		mk([]string{"eu", "us", "eu"}, []int32{1, 2, 3}, []float64{10, 20, 30}),
		mk([]string{"ap", "us", "eu"}, []int32{4, 5, 6}, []float64{40, 50, 60}),
	}
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return schema, recs
}

func run(t *testing.T, sql string) (arrow.RecordBatch, error) {
	t.Helper()
	schema, recs := sales(t)
	q, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(q, schema)
	if err != nil {
		return nil, err
	}
	return p.Run(context.Background(), &sliceBatches{recs: recs}, false)
}

// render writes a record as rows of comma-joined values, to compare whole answers.
func render(rec arrow.RecordBatch) string {
	var rows []string
	for r := 0; r < int(rec.NumRows()); r++ {
		var vals []string
		for c := 0; c < int(rec.NumCols()); c++ {
			vals = append(vals, rec.Column(c).ValueStr(r))
		}
		rows = append(rows, strings.Join(vals, ","))
	}
	return strings.Join(rows, ";")
}

// TestPlanValues checks the answers of the clauses a view supports against hand-computed ones.
func TestPlanValues(t *testing.T) {
	cases := []struct{ sql, cols, want string }{
		{"SELECT region, qty * 2 AS q2 FROM sales WHERE price > 15", "region,q2", "us,4;eu,6;ap,8;us,10;eu,12"},
		{"SELECT region, count(*) AS n, sum(qty) s, avg(price) a, min(price) lo, max(qty) hi FROM sales GROUP BY region ORDER BY region",
			"region,n,s,a,lo,hi", "ap,1,4,40,40,4;eu,3,10,33.333333333333336,10,6;us,2,7,35,20,5"},
		{"SELECT region, sum(qty * price) AS revenue FROM sales GROUP BY 1 HAVING count(*) > 1 ORDER BY revenue DESC", "region,revenue", "eu,460;us,290"},
		{"SELECT count(DISTINCT region) AS regions, count(*) AS n FROM sales", "regions,n", "3,6"},
		{"SELECT count(*) AS n, sum(qty) AS s FROM sales WHERE qty > 100", "n,s", "0,(null)"},
		{"SELECT qty FROM sales ORDER BY price DESC LIMIT 2 OFFSET 1", "qty", "5;4"},
		{"SELECT region AS r, sum(qty) + 1 AS s1 FROM sales GROUP BY r ORDER BY sum(qty) LIMIT 2", "r,s1", "ap,5;us,8"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			rec, err := run(t, c.sql)
			assert.NilError(t, err)
			defer rec.Release()
			var names []string
			for _, f := range rec.Schema().Fields() {
				names = append(names, f.Name)
			}
			assert.Equal(t, strings.Join(names, ","), c.cols)
			assert.Equal(t, render(rec), c.want)
		})
	}
}

// TestParseErrors: bad queries are InvalidInput naming the offending position.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		sql string
		pos int
		msg string
	}{
		{"SELEC a FROM t", 0, "must start with SELECT"},
		{"SELECT a FROM t JOIN u ON t.a = u.a", 16, "joins are not supported"},
		{"SELECT a FROM t, u", 15, "joins are not supported"},
		{"SELECT a +* 2 FROM t", 10, ""},
		{"SELECT a FROM t WHERE", 21, "WHERE needs a body"},
		{"SELECT a FROM (SELECT 1)", 15, "subqueries"},
		{"SELECT a FROM t LIMIT x", 22, "LIMIT takes"},
		{"SELECT a FROM t ORDER BY a GROUP BY a", 27, "out of place"},
		{"SELECT 'abc FROM t", 7, "unterminated"},
	}
	for _, c := range cases {
		_, err := Parse(c.sql)
		assert.Assert(t, err != nil, c.sql)
		var se *SyntaxError
		assert.Assert(t, errors.As(err, &se), "%s: %v", c.sql, err)
		assert.Equal(t, se.Pos, c.pos, "%s: %v", c.sql, err)
		assert.ErrorContains(t, err, c.msg)
		var ne *nserr.Error
		assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, c.sql)
	}
}

// TestPlanErrors: queries that parse but do not bind say why, with the position.
func TestPlanErrors(t *testing.T) {
	cases := []struct{ sql, msg string }{
		{"SELECT region, qty FROM sales GROUP BY region", "column `qty` must appear in GROUP BY or inside an aggregate at position 15"},
		{"SELECT nope FROM sales", "nope"},
		{"SELECT sum(region) FROM sales", "sum over utf8 is not supported"},
		{"SELECT region FROM sales WHERE count(*) > 1", "aggregates are not allowed in WHERE"},
		{"SELECT sum(count(qty)) FROM sales", "aggregates cannot be nested"},
	}
	for _, c := range cases {
		_, err := run(t, c.sql)
		assert.ErrorContains(t, err, c.msg, c.sql)
	}
}
