package query

// Scalar indices serving filters. The filter is split into its top-level
// AND-conjuncts; each conjunct of the shape an index answers (column op
// literal, BETWEEN, IN, IS NULL, array_has on a label list) is asked of
// the column's index, the answers are intersected, and the fragments every
// used index covers are read by taking only the selected rows; the
// remaining conjuncts (the residual) are evaluated on the taken rows. The
// fragments an index does not cover are scanned with the whole filter, as
// before. Rows come out in manifest order, then row order, as the scan
// gives them.
//
// An index answer is only used where it is provably the scan's: the
// literal is converted to the column's type exactly as the binder
// converts it (so the comparison is the scan's comparison in the column's
// type); NULLs never match (a NULL and a false conjunct both drop the
// row); floats are exact for = and IN (the index and the scan both equal
// -0 and +0 and never equal NaN to a number), but their ranges are not
// (the scan orders a NaN with the sign bit below -Inf, the index above
// every number), so a float range asks the index for the range and every
// NaN — a superset — and keeps the conjunct in the residual.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// indexUse is one conjunct a scalar index answers.
type indexUse struct {
	conj   expr.Expr
	column string
	pred   index.Predicate
	// nan, for a float range: the index is also asked for the NaN rows,
	// the answer is a superset and conj stays in the residual.
	nan   bool
	name  string
	typ   index.Type
	frags []uint64 // the fragments the index covers (plan time)
	rows  atomic.Int64
}

// indexPlan is how a filter uses the scalar indices.
type indexPlan struct {
	uses     []*indexUse
	residual expr.Expr // nil: the index answers are the filter
	resCols  []string  // top-level columns the residual reads
	covered  []uint64  // fragments every used index covers (plan time), manifest order
	// at run time: the selected live row addresses of each covered
	// fragment, ascending
	sel map[uint64][]uint64
}

// splitAnd lists the top-level AND-conjuncts of e.
func splitAnd(e expr.Expr) []expr.Expr {
	if b, ok := e.(*expr.Binary); ok && strings.EqualFold(b.Op, "AND") {
		return append(splitAnd(b.L), splitAnd(b.R)...)
	}
	return []expr.Expr{e}
}

// joinAnd is the conjunction of es (nil for none).
func joinAnd(es []expr.Expr) expr.Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		out = &expr.Binary{P: out.Pos(), Op: "AND", L: out, R: e}
	}
	return out
}

// planIndex decides which conjuncts of the filter e the version's
// scalar indices answer; nil when none.
func (p *planned) planIndex(e expr.Expr) *indexPlan {
	ip := &indexPlan{}
	var residual []expr.Expr
	var covered map[uint64]bool
	for _, c := range splitAnd(e) {
		u := p.indexable(c)
		if u != nil {
			name, typ, err := tableindex.ScalarIndexFor(p.ver, u.column, u.pred.Op)
			if err == nil {
				u.name, u.typ = name, typ
				u.frags, err = tableindex.IndexCoverage(p.ver, name)
			}
			if err != nil {
				u = nil
			}
		}
		if u == nil {
			residual = append(residual, c)
			continue
		}
		if u.nan || !u.typ.Exact() {
			// a superset: the conjunct rechecks the taken rows
			residual = append(residual, c)
		}
		if merged := mergeRange(ip.uses, u); merged {
			continue
		}
		ip.uses = append(ip.uses, u)
		cov := map[uint64]bool{}
		for _, f := range u.frags {
			if covered == nil || covered[f] {
				cov[f] = true
			}
		}
		covered = cov
	}
	if len(ip.uses) == 0 || len(covered) == 0 {
		return nil
	}
	for _, f := range p.ver.Fragments() {
		if covered[f.ID] {
			ip.covered = append(ip.covered, f.ID)
		}
	}
	ip.residual = joinAnd(residual)
	if ip.residual != nil {
		ip.resCols = referenced(ip.residual, p.bind)
		if len(ip.resCols) == 0 {
			// a residual of constants: not worth a special case
			return nil
		}
	}
	return ip
}

// indexable maps a conjunct to the predicate an index answers exactly
// (or, for float ranges, as a superset); nil when it has another shape.
func (p *planned) indexable(c expr.Expr) *indexUse {
	switch e := c.(type) {
	case *expr.Binary:
		op := e.Op
		col, lit := e.L, e.R
		if _, ok := col.(*expr.Literal); ok {
			col, lit = e.R, e.L
			switch op { // lit op col is col op' lit
			case "<":
				op = ">"
			case "<=":
				op = ">="
			case ">":
				op = "<"
			case ">=":
				op = "<="
			}
		}
		name, t, ok := p.indexColumn(col)
		if !ok {
			return nil
		}
		v, ok := literalValue(lit, t)
		if !ok {
			return nil
		}
		u := &indexUse{conj: c, column: name}
		switch op {
		case "=", "==":
			u.pred = index.Predicate{Op: index.Equals, Values: []any{v}}
			u.nan = isNaN(v) // never: no literal is NaN; kept for safety
			return u
		case "<":
			u.pred = index.Predicate{Op: index.Range, Upper: &index.Bound{Value: v}}
		case "<=":
			u.pred = index.Predicate{Op: index.Range, Upper: &index.Bound{Value: v, Inclusive: true}}
		case ">":
			u.pred = index.Predicate{Op: index.Range, Lower: &index.Bound{Value: v}}
		case ">=":
			u.pred = index.Predicate{Op: index.Range, Lower: &index.Bound{Value: v, Inclusive: true}}
		default:
			return nil
		}
		u.nan = isFloatType(t)
		return u
	case *expr.Between:
		if e.Not {
			return nil
		}
		name, t, ok := p.indexColumn(e.X)
		if !ok {
			return nil
		}
		lo, ok1 := literalValue(e.Lo, t)
		hi, ok2 := literalValue(e.Hi, t)
		if !ok1 || !ok2 {
			return nil
		}
		return &indexUse{conj: c, column: name, nan: isFloatType(t), pred: index.Predicate{Op: index.Range,
			Lower: &index.Bound{Value: lo, Inclusive: true}, Upper: &index.Bound{Value: hi, Inclusive: true}}}
	case *expr.InList:
		if e.Not || len(e.List) == 0 {
			return nil
		}
		name, t, ok := p.indexColumn(e.X)
		if !ok {
			return nil
		}
		u := &indexUse{conj: c, column: name, pred: index.Predicate{Op: index.IsIn}}
		for _, it := range e.List {
			v, ok := literalValue(it, t)
			if !ok {
				return nil
			}
			u.nan = u.nan || isNaN(v)
			u.pred.Values = append(u.pred.Values, v)
		}
		return u
	case *expr.Is:
		if e.Not || e.What != "NULL" {
			return nil
		}
		name, _, ok := p.indexColumn(e.X)
		if !ok {
			return nil
		}
		return &indexUse{conj: c, column: name, pred: index.Predicate{Op: index.IsNull}}
	case *expr.Like:
		return p.likeUse(c, e)
	case *expr.Call:
		if u := p.containsUse(c, e); u != nil {
			return u
		}
		// array_has(list, value): the rows whose list holds value (a null
		// list or value is NULL, no match), a label list's HasAny.
		switch e.Name {
		case "array_has", "array_contains", "list_has":
		default:
			return nil
		}
		if len(e.Args) != 2 {
			return nil
		}
		c0, ok := e.Args[0].(*expr.Column)
		if !ok || len(c0.Path) != 1 {
			return nil
		}
		i := findField(p.full, c0.Path[0])
		if i < 0 {
			return nil
		}
		f := p.full.Field(i)
		lt, ok := f.Type.(arrow.ListLikeType)
		if !ok {
			return nil
		}
		if _, fixed := f.Type.(*arrow.FixedSizeListType); fixed {
			return nil
		}
		v, ok := literalValue(e.Args[1], lt.Elem())
		if !ok || isNaN(v) {
			return nil
		}
		return &indexUse{conj: c, column: f.Name, pred: index.Predicate{Op: index.HasAny, Values: []any{v}}}
	}
	return nil
}

// indexColumn resolves a top-level column reference as the binder does,
// with a type an index holds.
func (p *planned) indexColumn(e expr.Expr) (string, arrow.DataType, bool) {
	c, ok := e.(*expr.Column)
	if !ok || len(c.Path) != 1 {
		return "", nil, false
	}
	i := findField(p.full, c.Path[0])
	if i < 0 {
		return "", nil, false
	}
	f := p.full.Field(i)
	switch f.Type.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return f.Name, f.Type, true
	}
	return "", nil, false
}

func isFloatType(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64 || t.ID() == arrow.FLOAT16
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// literalValue is literal e converted to type t as the binder converts a
// literal compared with a column of type t (its natural type, then a safe
// cast), as the Go value the index compares; false for a NULL, a literal
// the binder would not convert, or a value the index cannot represent.
func literalValue(e expr.Expr, t arrow.DataType) (any, bool) {
	l, ok := e.(*expr.Literal)
	if !ok {
		return nil, false
	}
	mem := memory.DefaultAllocator
	var arr arrow.Array
	switch l.Kind {
	case expr.LitBool:
		if t.ID() != arrow.BOOL {
			return nil, false
		}
		return l.Text == "true", true
	case expr.LitInt, expr.LitFloat:
		if !isNumericType(t) {
			return nil, false
		}
		if l.Kind == expr.LitInt {
			if n, ok := parseInt64(l.Text); ok {
				b := array.NewInt64Builder(mem)
				b.Append(n)
				arr = b.NewArray()
				b.Release()
				break
			}
		} else if !isFloatType(t) {
			return nil, false // 5.5 never converts to an integer column
		}
		f, ok := parseFloat(l.Text)
		if !ok {
			return nil, false
		}
		if !isFloatType(t) {
			return nil, false // an integer literal beyond int64: the binder's float
		}
		b := array.NewFloat64Builder(mem)
		b.Append(f)
		arr = b.NewArray()
		b.Release()
	case expr.LitString:
		if t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING {
			return nil, false
		}
		return l.Text, true
	default:
		// dates and timestamps: the binder's parsing is not exported; the
		// scan answers them
		return nil, false
	}
	defer arr.Release()
	out := arr
	if !arrow.TypeEqual(arr.DataType(), t) {
		c, err := compute.CastArray(context.Background(), arr, compute.SafeCastOptions(t))
		if err != nil {
			return nil, false
		}
		defer c.Release()
		out = c
	}
	if out.Len() != 1 || out.IsNull(0) {
		return nil, false
	}
	switch a := out.(type) {
	case *array.Int8:
		return int64(a.Value(0)), true
	case *array.Int16:
		return int64(a.Value(0)), true
	case *array.Int32:
		return int64(a.Value(0)), true
	case *array.Int64:
		return a.Value(0), true
	case *array.Uint8:
		return uint64(a.Value(0)), true
	case *array.Uint16:
		return uint64(a.Value(0)), true
	case *array.Uint32:
		return uint64(a.Value(0)), true
	case *array.Uint64:
		return a.Value(0), true
	case *array.Float32:
		return float64(a.Value(0)), true
	case *array.Float64:
		return a.Value(0), true
	}
	return nil, false
}

func isNumericType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// resolveIndex searches the planned indices (run time) and records the
// selected rows per covered fragment. An index lancecat cannot read
// (ErrUnsupported) drops the plan: the query scans.
func (p *planned) resolveIndex(ctx context.Context) error {
	ip := p.idx
	if ip == nil || ip.sel != nil {
		return nil
	}
	var rows *roaring64.Bitmap
	covered := map[uint64]bool{}
	for _, f := range ip.covered {
		covered[f] = true
	}
	start := now()
	for _, u := range ip.uses {
		m, err := tableindex.SearchScalarIndex(ctx, p.ds, p.ver, u.column, u.pred)
		if err == nil && u.nan {
			var nan *tableindex.ScalarIndexMatch
			nan, err = tableindex.SearchScalarIndex(ctx, p.ds, p.ver, u.column, index.Predicate{Op: index.Equals, Values: []any{math.NaN()}})
			if err == nil {
				m.Rows.Or(nan.Rows)
			}
		}
		if err != nil {
			if errors.Is(err, index.ErrUnsupported) || errors.Is(err, lance.ErrIndexNotFound) || errors.Is(err, lance.ErrUnsupportedFeature) {
				p.idx = nil
				return nil
			}
			return fmt.Errorf("query: index %q: %w", u.name, err)
		}
		if !slices.Equal(m.Covered, u.frags) {
			// the manifest changed under the plan: it is one version, so
			// never; scan rather than guess
			p.idx = nil
			return nil
		}
		u.rows.Store(int64(m.Rows.GetCardinality()))
		if rows == nil {
			rows = m.Rows
		} else {
			rows.And(m.Rows)
		}
	}
	ip.sel = map[uint64][]uint64{}
	it := rows.Iterator()
	for it.HasNext() {
		a := it.Next()
		f, _ := lance.SplitRowAddress(a)
		if covered[f] {
			ip.sel[f] = append(ip.sel[f], a)
		}
	}
	var n int64
	for _, s := range ip.sel {
		n += int64(len(s))
	}
	p.stage(stIndex).add(n, since(start))
	return nil
}

// filterTasks are the tasks of a filtered read: the covered fragments'
// selected rows (taken, in chunks) and the other fragments' scans, in
// manifest order.
func (p *planned) filterTasks() []task {
	all := p.tasks(0, -1)
	if p.idx == nil {
		return all
	}
	covered := map[uint64]bool{}
	for _, f := range p.idx.covered {
		covered[f] = true
	}
	var out []task
	done := map[uint64]bool{}
	for _, t := range all {
		if !covered[t.frag] {
			out = append(out, t)
			continue
		}
		if done[t.frag] {
			continue
		}
		done[t.frag] = true
		sel := p.idx.sel[t.frag]
		for lo := 0; lo < len(sel); lo += takeChunk {
			out = append(out, task{frag: t.frag, addrs: sel[lo:min(len(sel), lo+takeChunk)]})
		}
	}
	return out
}

// readTask reads a task's rows of cols: a scan, or a take of the rows an
// index selected.
func (p *planned) readTask(ctx context.Context, t task, cols []string, withRowID, withAddr bool, fn func(arrow.RecordBatch) error) error {
	if t.addrs == nil {
		return p.scanTask(ctx, t, cols, withRowID, withAddr, fn)
	}
	start := now()
	rec, err := p.ds.TakeRowAddresses(ctx, t.addrs, lance.TakeOptions{At: p.ver, Columns: cols,
		WithRowID: withRowID, WithRowAddress: withAddr, Mem: p.mem})
	if err != nil {
		return err
	}
	defer rec.Release()
	p.stage(stIndexTake).add(rec.NumRows(), since(start))
	return fn(rec)
}

// taskFilters compiles the filter of a read over cols: the whole filter
// for scanned fragments, the residual (nil: none) for taken rows.
func (p *planned) taskFilters(cols []string) (scan, taken *expr.Bound, err error) {
	if p.filterText == "" {
		return nil, nil, nil
	}
	schema := p.scanSchema(cols)
	if scan, err = expr.Compile(p.filterText, schema); err != nil {
		return nil, nil, err
	}
	if p.idx != nil && p.idx.residual != nil {
		if taken, err = expr.Bind(p.idx.residual, schema); err != nil {
			return nil, nil, err
		}
	}
	return scan, taken, nil
}

// filterFor picks the filter of task t.
func filterFor(t task, scan, taken *expr.Bound) *expr.Bound {
	if t.addrs != nil {
		return taken
	}
	return scan
}

// describe renders the index stage as Lance's plans do:
// query=[conjunct]@index(TYPE) per index used.
func (ip *indexPlan) describe() string {
	var parts []string
	for _, u := range ip.uses {
		s := fmt.Sprintf("query=[%s]@%s(%s)", u.conj, u.name, u.typ.PlanName())
		if u.nan {
			s += " (with the NaN rows, rechecked)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " AND ") + fmt.Sprintf(" fragments=%d", len(ip.covered))
}

// parseInt64 reads an integer literal as the binder does: the digits
// without their sign must fit an int64.
func parseInt64(s string) (int64, bool) {
	if _, err := strconv.ParseInt(strings.TrimPrefix(s, "-"), 10, 64); err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseFloat reads a number literal as the binder does (an overflow is
// ±Inf).
func parseFloat(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// mergeRange folds u, a range on a column, into a range on the same
// column already in uses (id >= a AND id < b is one search of one index,
// not two half-open ones intersected); true when it did.
func mergeRange(uses []*indexUse, u *indexUse) bool {
	if u.pred.Op != index.Range {
		return false
	}
	for _, o := range uses {
		if o.pred.Op != index.Range || o.column != u.column || o.name != u.name {
			continue
		}
		o.pred.Lower = tighter(o.pred.Lower, u.pred.Lower, 1)
		o.pred.Upper = tighter(o.pred.Upper, u.pred.Upper, -1)
		o.conj = &expr.Binary{P: o.conj.Pos(), Op: "AND", L: o.conj, R: u.conj}
		o.nan = o.nan || u.nan
		return true
	}
	return false
}

// tighter is the stricter of two bounds of a conjunction: the larger
// lower bound (dir 1) or the smaller upper bound (dir -1); at equal
// values, exclusive wins.
func tighter(a, b *index.Bound, dir int) *index.Bound {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	c := compareLit(a.Value, b.Value)
	switch {
	case c*dir > 0:
		return a
	case c*dir < 0:
		return b
	}
	return &index.Bound{Value: a.Value, Inclusive: a.Inclusive && b.Inclusive}
}

// compareLit orders two literal values of one column type (int64,
// uint64, float64, string or bool, as literalValue makes them).
func compareLit(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case uint64:
		return cmp.Compare(a, b.(uint64))
	case float64:
		return cmp.Compare(a, b.(float64))
	case string:
		return strings.Compare(a, b.(string))
	case bool:
		x, y := 0, 0
		if a {
			x = 1
		}
		if b.(bool) {
			y = 1
		}
		return cmp.Compare(x, y)
	}
	return 0
}

// containsUse maps contains(col, 'needle') to the substring predicate an
// NGRAM index narrows (a superset: the conjunct stays as the recheck);
// nil for another call, or a needle without a trigram to look up.
func (p *planned) containsUse(c expr.Expr, e *expr.Call) *indexUse {
	if !strings.EqualFold(e.Name, "contains") || len(e.Args) != 2 {
		return nil
	}
	name, t, ok := p.indexColumn(e.Args[0])
	if !ok || (t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING) {
		return nil
	}
	l, ok := e.Args[1].(*expr.Literal)
	if !ok || l.Kind != expr.LitString || !index.NGramSearchable(l.Text) {
		return nil
	}
	return &indexUse{conj: c, column: name, pred: index.Predicate{Op: index.Contains, Values: []any{l.Text}}}
}

// likeUse maps col [I]LIKE 'pattern' to the substrings every match holds
// (the pattern's literal runs between wildcards), for an NGRAM index as
// Lance uses one for LIKE: a superset, the conjunct stays as the recheck.
func (p *planned) likeUse(c expr.Expr, e *expr.Like) *indexUse {
	if e.Not {
		return nil
	}
	name, t, ok := p.indexColumn(e.X)
	if !ok || (t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING) {
		return nil
	}
	l, ok := e.Pattern.(*expr.Literal)
	if !ok || l.Kind != expr.LitString {
		return nil
	}
	runs := likeRuns(l.Text, e.Escape)
	if !index.NGramSearchable(runs...) {
		return nil
	}
	vals := make([]any, len(runs))
	for i, r := range runs {
		vals[i] = r
	}
	return &indexUse{conj: c, column: name, pred: index.Predicate{Op: index.Contains, Values: vals}}
}

// likeRuns are the literal runs of a LIKE pattern: the text between the
// wildcards % and _, an escaped character taken literally (the escape is
// a backslash unless ESCAPE names another, as the binder has it).
func likeRuns(pat, escape string) []string {
	var runs []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			runs = append(runs, cur.String())
			cur.Reset()
		}
	}
	esc := '\\'
	if escape != "" {
		esc, _ = utf8.DecodeRuneInString(escape)
	}
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
		case r == '%' || r == '_':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return runs
}
