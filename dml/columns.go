package dml

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// AddColumns adds columns computed from SQL expressions over each row, as
// Lance's add_columns: every fragment gains a data file holding the new
// columns (one value per physical row) and the commit is Lance's Merge
// operation with the new schema (new field ids above the table's largest).
func AddColumns(ctx context.Context, ds *lance.Dataset, cols []NewColumn) (*lance.Version, error) {
	if len(cols) == 0 {
		return nil, invalid("add_columns needs at least one column")
	}
	res, err := withRetry(ctx, func() (Result, error) {
		v, err := addColumnsOnce(ctx, ds, cols)
		return Result{Version: v}, err
	})
	return res.Version, err
}

func addColumnsOnce(ctx context.Context, ds *lance.Dataset, cols []NewColumn) (*lance.Version, error) {
	ver, schema, err := head(ctx, ds)
	if err != nil {
		return nil, err
	}
	var bound []*expr.Bound
	var parsed []expr.Expr
	var fields []arrow.Field
	var read []string
	seen := map[string]bool{}
	for _, f := range schema.Fields() {
		seen[strings.ToLower(f.Name)] = true
	}
	for _, c := range cols {
		if c.Name == "" || strings.Contains(c.Name, ".") {
			return nil, invalid("add_columns: invalid column name %q", c.Name)
		}
		if seen[strings.ToLower(c.Name)] {
			return nil, invalid("add_columns: column %q already exists", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		e, err := expr.Parse(c.Expr)
		if err != nil {
			return nil, err
		}
		b, err := expr.Bind(e, schema)
		if err != nil {
			return nil, err
		}
		t := b.Type()
		if t.ID() == arrow.NULL {
			return nil, invalid("add_columns: the type of %q (%s) is unknown; CAST it", c.Name, c.Expr)
		}
		bound = append(bound, b)
		parsed = append(parsed, e)
		fields = append(fields, arrow.Field{Name: c.Name, Type: t, Nullable: mayBeNull(e, schema)})
		for _, r := range columnsOf(e, schema) {
			if !slices.Contains(read, r) {
				read = append(read, r)
			}
		}
	}
	// Read only the columns the expressions use (rebound to that scan).
	newSchema := arrow.NewSchema(fields, nil)
	newFields, err := lancefile.LanceFields(newSchema, ver.MaxFieldID()+1)
	if err != nil {
		return nil, invalid("add_columns: %v", err)
	}
	columns := []string{}
	var scanFields []arrow.Field
	for _, f := range schema.Fields() {
		if slices.Contains(read, f.Name) {
			columns = append(columns, f.Name)
			scanFields = append(scanFields, f)
		}
	}
	scanSchema := arrow.NewSchema(scanFields, nil)
	for i, e := range parsed {
		if bound[i], err = expr.Bind(e, scanSchema); err != nil {
			return nil, err
		}
	}
	mapper := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		out := make([]arrow.Array, len(bound))
		for i, b := range bound {
			a, err := b.Eval(ctx, rec)
			if err != nil {
				for _, o := range out[:i] {
					o.Release()
				}
				return nil, err
			}
			out[i] = a
		}
		r := array.NewRecordBatch(newSchema, out, rec.NumRows())
		for _, o := range out {
			o.Release()
		}
		return r, nil
	}
	frags, err := addFiles(ctx, ds, ver, columns, newSchema, newFields, mapper)
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(ver.Fields()), newFields...)
	return ds.Commit(ctx, &lance.Merge{Fragments: frags, Schema: all, SchemaMetadata: ver.Manifest().GetSchemaMetadata()},
		lance.CommitOptions{ReadVersion: ver.Number()})
}

// addFiles gives every fragment of ver a new data file of the columns
// mapper computes from each batch of the fragment's physical rows (deleted
// ones included, so the file lines up with the fragment's others).
func addFiles(ctx context.Context, ds *lance.Dataset, ver *lance.Version, columns []string, schema *arrow.Schema, fields []*filepb.Field,
	mapper func(arrow.RecordBatch) (arrow.RecordBatch, error)) ([]*tablepb.DataFragment, error) {
	all := ver.WithoutDeletions()
	opts := writeOptions(ver)
	opts.MaxRowsPerFile = 1 << 31
	opts.MaxBytesPerFile = 1 << 62
	var out []*tablepb.DataFragment
	for _, f := range ver.Manifest().GetFragments() {
		s, err := ds.Scan(ctx, lance.ScanOptions{At: all, Columns: columns, Fragments: []uint64{f.GetId()}})
		if err != nil {
			return nil, err
		}
		ms := MapScan(s, schema, mapper)
		written, err := lance.WriteFragments(ctx, ds.Store(), schema, fields, ms, opts)
		ms.Release()
		s.Release()
		if err != nil {
			return nil, err
		}
		nf := proto.CloneOf(f)
		if len(written) == 1 {
			if written[0].GetPhysicalRows() != f.GetPhysicalRows() && f.GetPhysicalRows() != 0 {
				return nil, fmt.Errorf("dml: fragment %d: wrote %d rows for its %d", f.GetId(), written[0].GetPhysicalRows(), f.GetPhysicalRows())
			}
			nf.Files = append(nf.Files, written[0].GetFiles()...)
		}
		out = append(out, nf)
	}
	return out, nil
}

// MappedScan is a scan with each batch mapped by a function: the stream lance.WriteFragments
// takes when new column files are computed from a table's rows (add columns here, a computed
// column's backfill in mview). Release drops the batch it holds; the scan stays the caller's.
type MappedScan = mapStream

// MapScan maps every batch of s by fn into batches of schema; fn's batch is owned by the stream.
func MapScan(s *lance.Scanner, schema *arrow.Schema, fn func(arrow.RecordBatch) (arrow.RecordBatch, error)) *MappedScan {
	return &mapStream{s: s, schema: schema, fn: fn}
}

type mapStream struct {
	s      *lance.Scanner
	schema *arrow.Schema
	fn     func(arrow.RecordBatch) (arrow.RecordBatch, error)
	cur    arrow.RecordBatch
	err    error
}

func (m *mapStream) Schema() *arrow.Schema          { return m.schema }
func (m *mapStream) RecordBatch() arrow.RecordBatch { return m.cur }
func (m *mapStream) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.s.Err()
}
func (m *mapStream) Release() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}
func (m *mapStream) Next() bool {
	m.Release()
	if m.err != nil || !m.s.Next() {
		return false
	}
	m.cur, m.err = m.fn(m.s.RecordBatch())
	return m.err == nil
}

// AlterColumns renames columns, makes them nullable, or changes their data
// type. Without a type change this is lance.AlterColumns (Lance's Project).
// A type change rewrites the column as Lance's alter_columns does: the
// column gets a new field id, every fragment a new data file with the
// values cast (an overflow or a value that does not convert is
// InvalidInput), and the commit is a Merge with the new schema. Lance's
// rule for which casts are allowed applies (integer to integer, float to
// float, string to string, …).
func AlterColumns(ctx context.Context, ds *lance.Dataset, alts []Alteration) (*lance.Version, error) {
	if len(alts) == 0 {
		return nil, invalid("alter_columns needs at least one alteration")
	}
	if !slices.ContainsFunc(alts, func(a Alteration) bool { return a.DataType != nil }) {
		las := make([]lance.ColumnAlteration, len(alts))
		for i, a := range alts {
			las[i] = lance.ColumnAlteration{Path: a.Path, Rename: a.Rename, Nullable: a.Nullable}
		}
		return ds.AlterColumns(ctx, las...)
	}
	res, err := withRetry(ctx, func() (Result, error) {
		v, err := alterOnce(ctx, ds, alts)
		return Result{Version: v}, err
	})
	return res.Version, err
}

func alterOnce(ctx context.Context, ds *lance.Dataset, alts []Alteration) (*lance.Version, error) {
	ver, schema, err := head(ctx, ds)
	if err != nil {
		return nil, err
	}
	fields := make([]*filepb.Field, len(ver.Fields()))
	for i, f := range ver.Fields() {
		fields[i] = proto.CloneOf(f)
	}
	next := ver.MaxFieldID() + 1
	type cast struct {
		from string // column name in the read schema
		to   arrow.Field
	}
	var casts []cast
	var castFields []*filepb.Field
	for _, a := range alts {
		var f *filepb.Field
		for _, x := range fields {
			if x.GetParentId() == -1 && x.GetName() == a.Path {
				f = x
			}
		}
		if f == nil {
			if strings.Contains(a.Path, ".") && a.DataType != nil {
				return nil, nserr.Unsupportedf("alter_columns: changing the type of a nested field (%q) is not supported", a.Path)
			}
			if a.DataType != nil || !strings.Contains(a.Path, ".") {
				return nil, invalid("alter_columns: column %q does not exist in the table", a.Path)
			}
		}
		if a.Nullable != nil && f != nil && f.GetNullable() && !*a.Nullable {
			return nil, invalid("alter_columns: column %q is nullable and cannot be made non-nullable", a.Path)
		}
		if a.DataType == nil {
			if f == nil {
				continue // a nested rename: applied by lance below
			}
			if a.Rename != nil {
				if *a.Rename == "" || strings.Contains(*a.Rename, ".") {
					return nil, invalid("alter_columns: invalid column name %q", *a.Rename)
				}
				f.Name = *a.Rename
			}
			if a.Nullable != nil {
				f.Nullable = *a.Nullable
			}
			continue
		}
		from := schema.Field(schema.FieldIndices(f.GetName())[0])
		if !castAllowed(from.Type, a.DataType) || !canCast(from.Type, a.DataType) {
			return nil, invalid("alter_columns: cannot cast column %q from %s to %s", a.Path, from.Type, a.DataType)
		}
		name := f.GetName()
		if a.Rename != nil {
			name = *a.Rename
		}
		nullable := f.GetNullable()
		if a.Nullable != nil {
			nullable = *a.Nullable
		}
		to := arrow.Field{Name: name, Type: a.DataType, Nullable: nullable}
		nf, err := lancefile.LanceFields(arrow.NewSchema([]arrow.Field{to}, nil), next)
		if err != nil {
			return nil, invalid("alter_columns: %v", err)
		}
		next += int32(len(nf))
		// The new field takes the old one's place; its subtree goes.
		old := map[int32]bool{}
		for _, id := range subtree(fields, f.GetId()) {
			old[id] = true
		}
		pos := slices.Index(fields, f)
		fields = slices.Concat(fields[:pos], nf, slices.DeleteFunc(slices.Clone(fields[pos:]), func(x *filepb.Field) bool { return old[x.GetId()] }))
		casts = append(casts, cast{from: from.Name, to: to})
		castFields = append(castFields, nf...)
	}
	names := map[string]bool{}
	for _, f := range fields {
		if f.GetParentId() == -1 {
			if names[strings.ToLower(f.GetName())] {
				return nil, invalid("alter_columns: column %q already exists", f.GetName())
			}
			names[strings.ToLower(f.GetName())] = true
		}
	}
	for _, a := range alts {
		if a.DataType == nil && strings.Contains(a.Path, ".") {
			return nil, nserr.Unsupportedf("alter_columns: a nested rename together with a type change is not supported; alter %q separately", a.Path)
		}
	}
	var outFields []arrow.Field
	var read []string
	for _, c := range casts {
		outFields = append(outFields, c.to)
		read = append(read, c.from)
	}
	outSchema := arrow.NewSchema(outFields, nil)
	mapper := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		out := make([]arrow.Array, len(casts))
		for i, c := range casts {
			a, err := castTo(ctx, rec.Column(i), c.to.Type, c.from)
			if err != nil {
				for _, o := range out[:i] {
					o.Release()
				}
				return nil, err
			}
			out[i] = a
		}
		r := array.NewRecordBatch(outSchema, out, rec.NumRows())
		for _, o := range out {
			o.Release()
		}
		return r, nil
	}
	frags, err := addFiles(ctx, ds, ver, read, outSchema, castFields, mapper)
	if err != nil {
		return nil, err
	}
	// Data files left without a field of the schema are dropped, as Lance does.
	live := map[int32]bool{}
	for _, f := range fields {
		live[f.GetId()] = true
	}
	for _, f := range frags {
		f.Files = slices.DeleteFunc(f.Files, func(df *tablepb.DataFile) bool {
			return !slices.ContainsFunc(df.GetFields(), func(id int32) bool { return live[id] })
		})
	}
	return ds.Commit(ctx, &lance.Merge{Fragments: frags, Schema: fields, SchemaMetadata: ver.Manifest().GetSchemaMetadata()},
		lance.CommitOptions{ReadVersion: ver.Number()})
}

func subtree(fields []*filepb.Field, id int32) []int32 {
	out := []int32{id}
	for changed := true; changed; {
		changed = false
		for _, f := range fields {
			if slices.Contains(out, f.GetParentId()) && !slices.Contains(out, f.GetId()) {
				out = append(out, f.GetId())
				changed = true
			}
		}
	}
	return out
}

// castAllowed is Lance's is_upcast_downcast: casts stay within a family
// (integers, floats, temporal types, strings, binaries, decimals, lists of
// an allowed cast).
func castAllowed(from, to arrow.DataType) bool {
	isInt := func(t arrow.DataType) bool { return arrow.IsInteger(t.ID()) }
	isFloat := func(t arrow.DataType) bool { return arrow.IsFloating(t.ID()) }
	isTemporal := func(t arrow.DataType) bool {
		switch t.ID() {
		case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO:
			return true
		}
		return false
	}
	elem := func(t arrow.DataType) arrow.DataType {
		switch l := t.(type) {
		case *arrow.ListType:
			return l.Elem()
		case *arrow.LargeListType:
			return l.Elem()
		case *arrow.FixedSizeListType:
			return l.Elem()
		}
		return nil
	}
	switch {
	case isInt(from):
		return isInt(to)
	case isFloat(from):
		return isFloat(to)
	case isTemporal(from):
		return isTemporal(to)
	}
	switch from.ID() {
	case arrow.BOOL:
		return to.ID() == arrow.BOOL
	case arrow.STRING, arrow.LARGE_STRING:
		return to.ID() == arrow.STRING || to.ID() == arrow.LARGE_STRING
	case arrow.BINARY, arrow.LARGE_BINARY:
		return to.ID() == arrow.BINARY || to.ID() == arrow.LARGE_BINARY
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return to.ID() == arrow.DECIMAL128 || to.ID() == arrow.DECIMAL256
	}
	if fe := elem(from); fe != nil {
		if te := elem(to); te != nil {
			return castAllowed(fe, te)
		}
	}
	return false
}

// mayBeNull: e can evaluate to null over rows of schema. A column Lance adds from an expression
// is non-null when the expression cannot be (DataFusion's nullability, which Lance's
// add_columns takes: id * 2 over a non-null id is non-null): non-null columns and literals
// combined by arithmetic that cannot divide by zero, comparisons, AND/OR/NOT and CAST.
// Anything else (functions, CASE, division) may be null.
func mayBeNull(e expr.Expr, schema *arrow.Schema) bool {
	switch x := e.(type) {
	case *expr.Literal:
		return x.Kind == expr.LitNull
	case *expr.Column:
		if len(x.Path) != 1 {
			return true
		}
		for _, f := range schema.Fields() {
			if f.Name == x.Path[0] {
				return f.Nullable
			}
		}
		return true
	case *expr.Unary:
		return !slices.Contains([]string{"-", "+", "NOT"}, strings.ToUpper(x.Op)) || mayBeNull(x.X, schema)
	case *expr.Binary:
		switch strings.ToUpper(x.Op) {
		case "+", "-", "*", "=", "!=", "<>", "<", "<=", ">", ">=", "AND", "OR":
			return mayBeNull(x.L, schema) || mayBeNull(x.R, schema)
		}
		return true
	case *expr.Cast:
		return x.Try || mayBeNull(x.X, schema)
	}
	return true
}
