package expr

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Projection is a bound projection list: one output column per item.
type Projection struct {
	items  []*Bound
	schema *arrow.Schema
}

// BindSelect binds parsed projection items against schema. Output names must be unique.
func BindSelect(items []SelectItem, schema *arrow.Schema) (*Projection, error) {
	p := &Projection{}
	fields := make([]arrow.Field, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		b, err := Bind(it.Expr, schema)
		if err != nil {
			return nil, err
		}
		name := it.Name()
		if seen[name] {
			return nil, errorf(it.Expr.Pos(), name, "duplicate output column %q", name)
		}
		seen[name] = true
		p.items = append(p.items, b)
		fields = append(fields, arrow.Field{Name: name, Type: b.Type(), Nullable: true})
	}
	p.schema = arrow.NewSchema(fields, nil)
	return p, nil
}

// CompileSelect parses and binds a projection list (`a, b + 1 AS c, lower(s) s2`).
func CompileSelect(s string, schema *arrow.Schema) (*Projection, error) {
	items, err := ParseSelect(s)
	if err != nil {
		return nil, err
	}
	return BindSelect(items, schema)
}

// Schema is the schema of the projected records.
func (p *Projection) Schema() *arrow.Schema { return p.schema }

// Project evaluates every item over rec.
func (p *Projection) Project(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, len(p.items))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, it := range p.items {
		c, err := it.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return array.NewRecordBatch(p.schema, cols, rec.NumRows()), nil
}
