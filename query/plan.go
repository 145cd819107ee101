package query

import (
	"context"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// planned is a validated request: which columns each phase reads, the
// bound filter, the output items and the kNN or sort parameters.
type planned struct {
	ds   *lance.Dataset
	ver  *lance.Version
	req  Request
	mem  memory.Allocator
	full *arrow.Schema // the version's schema (top-level columns)
	bind *arrow.Schema // full and the virtual _rowid: what expressions bind against

	needRowID bool // the scans read _rowid (asked for, selected, filtered or sorted on)
	// rowIDFirst: _rowid comes before _distance in the answer (an index-served fast search)
	rowIDFirst bool

	filterText string
	filterCols []string   // top-level columns the filter reads
	idx        *indexPlan // the scalar indices answering conjuncts of the filter; nil: none

	out     []outItem // the requested columns or projections, in order
	outCols []string  // top-level columns the output items read

	knn   *knnPlan
	ann   *annPlan // the vector index serving the kNN; nil: flat
	order []orderKey

	schema *arrow.Schema // of the answer
	stages []*stage      // for explain/analyze, outermost first
}

// outItem is one output column: a column of the table read as is, or an
// expression over the columns.
type outItem struct {
	name    string
	column  string // direct column (expr and special empty)
	expr    expr.Expr
	special string // DistanceColumn: the search's distance, where the client selected it
	typ     arrow.DataType
}

// plan validates req against the version it reads.
func plan(ctx context.Context, ds *lance.Dataset, req Request) (*planned, error) {
	ver := req.At
	if ver == nil {
		var err error
		if ver, err = ds.OpenLatest(ctx); err != nil {
			return nil, err
		}
	}
	full, err := lance.ToArrowSchema(ver.Fields(), ver.Manifest().GetSchemaMetadata(), false)
	if err != nil {
		return nil, err
	}
	p := &planned{ds: ds, ver: ver, req: req, mem: req.Mem, full: full,
		bind: arrow.NewSchema(append(full.Fields(), arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64}), nil)}
	if p.mem == nil {
		p.mem = memory.DefaultAllocator
	}
	if req.Offset < 0 {
		return nil, nserr.InvalidInputf("offset must not be negative, got %d", req.Offset)
	}
	if req.Filter = expr.FilterText(strings.TrimSpace(req.Filter)); req.Filter != "" {
		e, err := expr.Parse(req.Filter)
		if err != nil {
			return nil, err
		}
		b, err := expr.Bind(e, p.bind)
		if err != nil {
			return nil, err
		}
		// A filter typed NULL (WHERE NULL) is refused up front, as Lance refuses it ("does not
		// return a boolean"); accepting it here failed the query mid-stream in the evaluator.
		if b.Type().ID() != arrow.BOOL {
			return nil, nserr.InvalidInputf("the filter %q is %s, not a boolean expression", req.Filter, b.Type())
		}
		p.filterText = req.Filter
		p.filterCols = referenced(e, p.bind)
		p.idx = p.planIndex(e)
	}
	p.req = req
	if err := p.planOutput(); err != nil {
		return nil, err
	}
	if req.Vector != nil {
		if p.knn, err = planKNN(full, req); err != nil {
			return nil, err
		}
		if !req.Prefilter {
			p.idx = nil // a postfilter runs on the nearest rows only
		}
		if err := p.planANN(ctx); err != nil {
			return nil, err
		}
		if req.Vector.FastSearch && p.ann != nil && !req.WithRowID {
			// Lance answers a fast search served by an index with _rowid too, before
			// _distance (the SDK embedded: id, _rowid, _distance for select(["id"])).
			p.req.WithRowID, p.rowIDFirst = true, true
		}
	}
	if p.order, err = planOrder(p.bind, req.OrderBy); err != nil {
		return nil, err
	}
	p.needRowID = p.req.WithRowID || slices.Contains(p.filterCols, RowIDColumn) || slices.Contains(p.orderCols(), RowIDColumn)
	for _, it := range p.out {
		p.needRowID = p.needRowID || it.expr != nil && slices.Contains(referenced(it.expr, p.bind), RowIDColumn)
	}
	p.schema = p.outputSchema()
	p.stages = p.buildStages()
	return p, nil
}

// planOutput resolves Columns (or Projection) to output items.
func (p *planned) planOutput() error {
	req := p.req
	if req.Projection != nil && req.Columns != nil {
		return nserr.InvalidInputf("a query selects either columns or projections, not both")
	}
	seen := map[string]bool{}
	add := func(it outItem) error {
		if seen[it.name] {
			return nserr.InvalidInputf("duplicate output column %q", it.name)
		}
		seen[it.name] = true
		p.out = append(p.out, it)
		return nil
	}
	switch {
	case req.Projection != nil:
		for _, pr := range req.Projection {
			if pr.Name == "" {
				return nserr.InvalidInputf("a projection needs a name (expression %q)", pr.Expr)
			}
			it, err := p.item(pr.Name, pr.Expr)
			if err != nil {
				return err
			}
			if err := add(it); err != nil {
				return err
			}
		}
	case req.Columns != nil:
		for _, c := range req.Columns {
			it, err := p.item(c, c)
			if err != nil {
				return err
			}
			if err := add(it); err != nil {
				return err
			}
		}
	default:
		for _, f := range p.full.Fields() {
			if err := add(outItem{name: f.Name, column: f.Name, typ: f.Type}); err != nil {
				return err
			}
		}
	}
	var cols []string
	for _, it := range p.out {
		if it.special != "" {
			continue
		}
		if it.expr == nil {
			cols = append(cols, it.column)
		} else {
			cols = append(cols, referenced(it.expr, p.bind)...)
		}
	}
	p.outCols = tableOrder(p.full, cols)
	return nil
}

// item resolves one output: a top-level column by its exact name, else an
// expression (a nested a.b, an arithmetic, a function call, …).
func (p *planned) item(name, text string) (outItem, error) {
	if text == DistanceColumn && p.req.Vector != nil {
		return outItem{name: name, special: DistanceColumn, typ: arrow.PrimitiveTypes.Float32}, nil
	}
	if i := p.full.FieldIndices(text); len(i) == 1 {
		f := p.full.Field(i[0])
		return outItem{name: name, column: f.Name, typ: f.Type}, nil
	}
	e, err := expr.Parse(text)
	if err != nil {
		return outItem{}, err
	}
	b, err := expr.Bind(e, p.bind)
	if err != nil {
		return outItem{}, err
	}
	return outItem{name: name, expr: e, typ: b.Type()}, nil
}

// outputSchema: the output items, then _distance, then _rowid; a search
// with more than one query vector starts with query_index (as the SDK
// answers).
func (p *planned) outputSchema() *arrow.Schema {
	var fs []arrow.Field
	if p.knn != nil && len(p.knn.vectors) > 1 {
		fs = append(fs, arrow.Field{Name: QueryIndexColumn, Type: arrow.PrimitiveTypes.Int32})
	}
	for _, it := range p.out {
		nullable := true
		if it.expr == nil && it.special == "" {
			f := p.full.Field(p.full.FieldIndices(it.column)[0])
			nullable = f.Nullable
		}
		fs = append(fs, arrow.Field{Name: it.name, Type: it.typ, Nullable: nullable})
	}
	rowID := p.req.WithRowID && !p.selected(RowIDColumn)
	if rowID && p.rowIDFirst {
		fs = append(fs, arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	if p.knn != nil && !p.selected(DistanceColumn) {
		fs = append(fs, arrow.Field{Name: DistanceColumn, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	}
	if rowID && !p.rowIDFirst {
		fs = append(fs, arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	return arrow.NewSchema(fs, nil)
}

// selected: an output item already answers the column name (the client
// selected _distance or _rowid where it wants it).
func (p *planned) selected(name string) bool {
	for _, it := range p.out {
		if it.name == name {
			return true
		}
	}
	return false
}

// scanSchema is the schema expressions bind against over a scan of cols:
// the columns, then _rowid when the plan reads it.
func (p *planned) scanSchema(cols []string) *arrow.Schema {
	s := subSchema(p.full, cols)
	if !p.needRowID {
		return s
	}
	return arrow.NewSchema(append(s.Fields(), arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64}), nil)
}

// referenced lists the top-level columns e reads, resolved as the binder
// resolves names (exact, else the one case-insensitive match).
func referenced(e expr.Expr, schema *arrow.Schema) []string {
	var out []string
	expr.VisitColumns(e, func(c *expr.Column) {
		if i := findField(schema, c.Path[0]); i >= 0 {
			out = append(out, schema.Field(i).Name)
		}
	})
	return out
}

func findField(schema *arrow.Schema, name string) int {
	if i := schema.FieldIndices(name); len(i) > 0 {
		return i[0]
	}
	found := -1
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// tableOrder dedups names and puts them in the table's column order.
func tableOrder(schema *arrow.Schema, names ...[]string) []string {
	want := map[string]bool{}
	for _, ns := range names {
		for _, n := range ns {
			want[n] = true
		}
	}
	out := []string{}
	for _, f := range schema.Fields() {
		if want[f.Name] {
			out = append(out, f.Name)
		}
	}
	return out
}

// subSchema is schema restricted to cols (in the given order).
func subSchema(schema *arrow.Schema, cols []string) *arrow.Schema {
	fs := make([]arrow.Field, 0, len(cols))
	for _, c := range cols {
		fs = append(fs, schema.Field(schema.FieldIndices(c)[0]))
	}
	return arrow.NewSchema(fs, nil)
}

func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

func quoteList(names []string) string {
	q := slices.Clone(names)
	return "[" + strings.Join(q, ", ") + "]"
}
