package mview

// Planning a view query against its source's schema: which columns it reads, its output schema
// (known without running it, so with_no_data creates the view's table with the right schema),
// and the three stages it runs in: per source batch (WHERE, then the select items, or the group
// keys and aggregate arguments), per group (aggregates, HAVING, the items over them), and over
// the whole answer (ORDER BY, OFFSET, LIMIT).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/expr"
)

// aggregate functions a view computes.
var aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

// aggSpec is one aggregate call of the query.
type aggSpec struct {
	fn       string
	distinct bool
	arg      *expr.Bound // over the source schema
	key      string      // the call's text: equal calls share one aggregate
	out      arrow.DataType
	kind     canonKind // how its argument is accumulated
}

// orderCol is one sort key: a column of the full output (visible then hidden items).
type orderCol struct {
	col        int
	desc       bool
	nullsFirst bool
}

// Plan is a view query bound to its source's schema.
type Plan struct {
	Query   *Query
	Source  *arrow.Schema
	Columns []string // the source columns the query reads
	where   *expr.Bound

	agg     bool
	proj    *expr.Projection // non-aggregate: items (then hidden order keys) over the source
	groups  []*expr.Bound    // aggregate: group keys over the source
	aggs    []aggSpec
	aggIn   *arrow.Schema    // __g0…, __a0… : the per-group record
	post    *expr.Projection // items (then hidden order keys) over aggIn
	having  *expr.Bound      // over aggIn
	visible int              // how many output columns are the items'
	order   []orderCol
	schema  *arrow.Schema
}

// Schema is the view's schema.
func (p *Plan) Schema() *arrow.Schema { return p.schema }

func hasAggregate(e expr.Expr) bool {
	found := false
	walk(e, func(x expr.Expr) {
		if c, ok := x.(*expr.Call); ok && aggregates[c.Name] {
			found = true
		}
	})
	return found
}

// walk calls fn on every node of e, parents first.
func walk(e expr.Expr, fn func(expr.Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch e := e.(type) {
	case *expr.Unary:
		walk(e.X, fn)
	case *expr.Binary:
		walk(e.L, fn)
		walk(e.R, fn)
	case *expr.Is:
		walk(e.X, fn)
	case *expr.InList:
		walk(e.X, fn)
		for _, x := range e.List {
			walk(x, fn)
		}
	case *expr.Between:
		walk(e.X, fn)
		walk(e.Lo, fn)
		walk(e.Hi, fn)
	case *expr.Like:
		walk(e.X, fn)
		walk(e.Pattern, fn)
	case *expr.Cast:
		walk(e.X, fn)
	case *expr.Case:
		walk(e.Operand, fn)
		for _, w := range e.Whens {
			walk(w.Cond, fn)
			walk(w.Then, fn)
		}
		walk(e.Else, fn)
	case *expr.Call:
		for _, x := range e.Args {
			walk(x, fn)
		}
	}
}

// rewrite rebuilds e bottom-up with fn replacing nodes (fn answers nil to keep a node and
// descend into it).
func rewrite(e expr.Expr, fn func(expr.Expr) (expr.Expr, error)) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	r, err := fn(e)
	if err != nil || r != nil {
		return r, err
	}
	rw := func(x expr.Expr) expr.Expr {
		if err != nil {
			return x
		}
		var y expr.Expr
		y, err = rewrite(x, fn)
		return y
	}
	switch e := e.(type) {
	case *expr.Unary:
		c := *e
		c.X = rw(e.X)
		return &c, err
	case *expr.Binary:
		c := *e
		c.L, c.R = rw(e.L), rw(e.R)
		return &c, err
	case *expr.Is:
		c := *e
		c.X = rw(e.X)
		return &c, err
	case *expr.InList:
		c := *e
		c.X = rw(e.X)
		c.List = make([]expr.Expr, len(e.List))
		for i, x := range e.List {
			c.List[i] = rw(x)
		}
		return &c, err
	case *expr.Between:
		c := *e
		c.X, c.Lo, c.Hi = rw(e.X), rw(e.Lo), rw(e.Hi)
		return &c, err
	case *expr.Like:
		c := *e
		c.X, c.Pattern = rw(e.X), rw(e.Pattern)
		return &c, err
	case *expr.Cast:
		c := *e
		c.X = rw(e.X)
		return &c, err
	case *expr.Case:
		c := *e
		c.Operand = rw(e.Operand)
		c.Whens = make([]expr.When, len(e.Whens))
		for i, w := range e.Whens {
			c.Whens[i] = expr.When{Cond: rw(w.Cond), Then: rw(w.Then)}
		}
		c.Else = rw(e.Else)
		return &c, err
	case *expr.Call:
		c := *e
		c.Args = make([]expr.Expr, len(e.Args))
		for i, x := range e.Args {
			c.Args[i] = rw(x)
		}
		return &c, err
	}
	return e, nil
}

func col(pos int, name string) *expr.Column { return &expr.Column{P: pos, Path: []string{name}} }

// hasField says whether schema has a top-level field named name (case-insensitively, as expr
// resolves).
func hasField(schema *arrow.Schema, name string) bool {
	for _, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// NewPlan binds q to the source's schema.
func NewPlan(q *Query, source *arrow.Schema) (*Plan, error) {
	p := &Plan{Query: q, Source: source, visible: len(q.Items)}
	// The columns read: every column any clause names.
	var read []string
	note := func(e expr.Expr) {
		expr.VisitColumns(e, func(c *expr.Column) {
			for _, f := range source.Fields() {
				if strings.EqualFold(f.Name, c.Path[0]) && !slices.Contains(read, f.Name) {
					read = append(read, f.Name)
				}
			}
		})
	}
	if q.Where != nil {
		if hasAggregate(q.Where) {
			return nil, syntaxErr(q.Where.Pos(), "aggregates are not allowed in WHERE (use HAVING)")
		}
		b, err := expr.Bind(q.Where, source)
		if err != nil {
			return nil, exprErr(err)
		}
		p.where = b
		note(q.Where)
	}
	// GROUP BY by ordinal or by an item's alias.
	groups := make([]expr.Expr, len(q.GroupBy))
	for i, g := range q.GroupBy {
		groups[i] = g
		if l, ok := g.(*expr.Literal); ok && l.Kind == expr.LitInt {
			n, _ := strconv.Atoi(l.Text)
			if n < 1 || n > len(q.Items) {
				return nil, syntaxErr(g.Pos(), "GROUP BY %d: there are %d select items", n, len(q.Items))
			}
			groups[i] = q.Items[n-1].Expr
		} else if c, ok := g.(*expr.Column); ok && len(c.Path) == 1 && !hasField(source, c.Path[0]) {
			for _, it := range q.Items {
				if it.Alias != "" && strings.EqualFold(it.Alias, c.Path[0]) {
					groups[i] = it.Expr
				}
			}
		}
		if hasAggregate(groups[i]) {
			return nil, syntaxErr(g.Pos(), "aggregates are not allowed in GROUP BY")
		}
	}
	p.agg = len(groups) > 0 || q.Having != nil
	for _, it := range q.Items {
		note(it.Expr)
		p.agg = p.agg || hasAggregate(it.Expr)
	}
	for _, k := range q.OrderBy {
		p.agg = p.agg || hasAggregate(k.Expr)
	}
	// ORDER BY: an ordinal, an output name, an item's expression, else a hidden item.
	extra := []Item{}
	outName := func(i int) string { return q.Items[i].Name() }
	for _, k := range q.OrderBy {
		oc := orderCol{col: -1, desc: k.Descending, nullsFirst: k.NullsFirst}
		if l, ok := k.Expr.(*expr.Literal); ok && l.Kind == expr.LitInt {
			n, _ := strconv.Atoi(l.Text)
			if n < 1 || n > len(q.Items) {
				return nil, syntaxErr(k.Expr.Pos(), "ORDER BY %d: there are %d select items", n, len(q.Items))
			}
			oc.col = n - 1
		}
		if c, ok := k.Expr.(*expr.Column); ok && oc.col < 0 && len(c.Path) == 1 {
			for i := range q.Items {
				if outName(i) == c.Path[0] || (q.Items[i].Alias != "" && strings.EqualFold(q.Items[i].Alias, c.Path[0])) {
					oc.col = i
					break
				}
			}
		}
		for i := range q.Items {
			if oc.col < 0 && q.Items[i].Expr.String() == k.Expr.String() {
				oc.col = i
			}
		}
		if oc.col < 0 {
			oc.col = len(q.Items) + len(extra)
			extra = append(extra, Item{Expr: k.Expr, Alias: fmt.Sprintf("__order%d", len(extra))})
			note(k.Expr)
		}
		p.order = append(p.order, oc)
	}
	all := append(slices.Clone(q.Items), extra...)
	for _, g := range groups {
		note(g)
	}
	if q.Having != nil {
		note(q.Having)
	}
	p.Columns = read
	if !p.agg {
		sel := make([]expr.SelectItem, len(all))
		for i, it := range all {
			sel[i] = expr.SelectItem{Expr: it.Expr, Alias: it.Alias}
		}
		proj, err := expr.BindSelect(sel, source)
		if err != nil {
			return nil, exprErr(err)
		}
		p.proj = proj
		p.schema = arrow.NewSchema(proj.Schema().Fields()[:p.visible], nil)
		return p, nil
	}
	// Aggregate: bind the group keys and the aggregates' arguments over the source, then the
	// items and HAVING over the per-group record.
	fields := []arrow.Field{}
	for i, g := range groups {
		b, err := expr.Bind(g, source)
		if err != nil {
			return nil, exprErr(err)
		}
		p.groups = append(p.groups, b)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("__g%d", i), Type: b.Type(), Nullable: true})
	}
	var aggFields []arrow.Field
	over := func(e expr.Expr) (expr.Expr, error) {
		return rewrite(e, func(x expr.Expr) (expr.Expr, error) {
			for i, g := range groups {
				if x.String() == g.String() {
					return col(x.Pos(), fmt.Sprintf("__g%d", i)), nil
				}
			}
			switch x := x.(type) {
			case *expr.Call:
				if !aggregates[x.Name] {
					return nil, nil
				}
				return p.aggregate(x, source, &aggFields)
			case *expr.Column:
				return nil, syntaxErr(x.P, "column %s must appear in GROUP BY or inside an aggregate", x)
			}
			return nil, nil
		})
	}
	post := make([]expr.SelectItem, len(all))
	for i, it := range all {
		e, err := over(it.Expr)
		if err != nil {
			return nil, err
		}
		post[i] = expr.SelectItem{Expr: e, Alias: it.Name()}
	}
	var having expr.Expr
	if q.Having != nil {
		var err error
		if having, err = over(q.Having); err != nil {
			return nil, err
		}
	}
	p.aggIn = arrow.NewSchema(append(fields, aggFields...), nil)
	proj, err := expr.BindSelect(post, p.aggIn)
	if err != nil {
		return nil, exprErr(err)
	}
	p.post = proj
	if having != nil {
		if p.having, err = expr.Bind(having, p.aggIn); err != nil {
			return nil, exprErr(err)
		}
	}
	p.schema = arrow.NewSchema(proj.Schema().Fields()[:p.visible], nil)
	return p, nil
}

// aggregate registers call (an aggregate) and answers the column of its value.
func (p *Plan) aggregate(call *expr.Call, source *arrow.Schema, fields *[]arrow.Field) (expr.Expr, error) {
	distinct := p.Query.distinct[call.P]
	key := call.String()
	if distinct {
		key = "distinct " + key
	}
	for i, a := range p.aggs {
		if a.key == key {
			return col(call.P, fmt.Sprintf("__a%d", i)), nil
		}
	}
	if len(call.Args) != 1 {
		return nil, syntaxErr(call.P, "%s takes one argument", call.Name)
	}
	if hasAggregate(call.Args[0]) {
		return nil, syntaxErr(call.P, "aggregates cannot be nested")
	}
	if distinct && call.Name != "count" {
		return nil, syntaxErr(call.P, "DISTINCT is supported in count only")
	}
	arg, err := expr.Bind(call.Args[0], source)
	if err != nil {
		return nil, exprErr(err)
	}
	a := aggSpec{fn: call.Name, distinct: distinct, arg: arg, key: key, kind: canonOf(arg.Type())}
	switch a.fn {
	case "count":
		a.out = arrow.PrimitiveTypes.Int64
	case "sum":
		switch a.kind {
		case canonInt:
			a.out = arrow.PrimitiveTypes.Int64
		case canonFloat:
			a.out = arrow.PrimitiveTypes.Float64
		default:
			return nil, syntaxErr(call.P, "sum over %s is not supported (a numeric argument is)", arg.Type())
		}
	case "avg":
		if a.kind != canonInt && a.kind != canonFloat {
			return nil, syntaxErr(call.P, "avg over %s is not supported (a numeric argument is)", arg.Type())
		}
		a.out = arrow.PrimitiveTypes.Float64
	case "min", "max":
		if a.kind == canonNone || a.kind == canonBool {
			return nil, syntaxErr(call.P, "%s over %s is not supported", a.fn, arg.Type())
		}
		a.out = arg.Type()
	}
	p.aggs = append(p.aggs, a)
	*fields = append(*fields, arrow.Field{Name: fmt.Sprintf("__a%d", len(p.aggs)-1), Type: a.out, Nullable: true})
	return col(call.P, fmt.Sprintf("__a%d", len(p.aggs)-1)), nil
}
