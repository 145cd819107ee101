package dml

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Merge upserts rs into the table on the key columns m.On as Lance's
// merge_insert, committed as Lance commits it (Update in RewriteRows
// mode): target rows matched by a source row are deleted and the source
// row written when WhenMatchedUpdateAll (and, with a filter, only where it
// holds; the filter names columns as target.x and source.x, as Lance
// does); unmatched source rows are written when WhenNotMatchedInsertAll;
// target rows no source row matches are deleted when
// WhenNotMatchedBySourceDelete (and its filter, over the target's columns,
// holds). Keys match as SQL equality: a NULL key matches nothing. Two
// source rows with the same key are InvalidInput and nothing is written
// (Lance refuses them when they match a target row, as an ambiguous merge;
// when they match none it inserts both, a silent duplicate we refuse too).
func Merge(ctx context.Context, ds *lance.Dataset, rs lance.RecordStream, m MergeInsert) (Result, error) {
	if len(m.On) == 0 {
		return Result{}, invalid("merge_insert needs at least one key column (on)")
	}
	if !m.WhenMatchedUpdateAll && !m.WhenNotMatchedInsertAll && !m.WhenNotMatchedBySourceDelete {
		return Result{}, invalid("merge_insert needs at least one of when_matched_update_all, when_not_matched_insert_all, when_not_matched_by_source_delete")
	}
	ver, schema, err := head(ctx, ds)
	if err != nil {
		return Result{}, err
	}
	src, missing, err := readSource(ctx, rs, schema)
	if err != nil {
		return Result{}, err
	}
	for _, k := range m.On {
		if i := schema.FieldIndices(k); len(i) == 1 && slices.Contains(missing, i[0]) {
			return Result{}, invalid("merge_insert: the source has no key column %q", k)
		}
	}
	defer src.Release()
	first := true
	return withRetry(ctx, func() (Result, error) {
		if !first {
			if ver, schema, err = head(ctx, ds); err != nil {
				return Result{}, err
			}
		}
		first = false
		return mergeOnce(ctx, ds, ver, schema, src, missing, m)
	})
}

// readSource reads the whole source, conformed to the table's schema
// (columns by name, in the table's order, cast to its types). The source
// may leave columns out, as Lance allows: missing reports them (NULL in
// the record; an update keeps the target's values there).
func readSource(ctx context.Context, rs lance.RecordStream, schema *arrow.Schema) (arrow.RecordBatch, []int, error) {
	in := rs.Schema()
	perm := make([]int, schema.NumFields())
	var missing []int
	for i, f := range schema.Fields() {
		idx := in.FieldIndices(f.Name)
		if len(idx) != 1 {
			perm[i] = -1
			missing = append(missing, i)
			continue
		}
		perm[i] = idx[0]
	}
	for _, f := range in.Fields() {
		if len(schema.FieldIndices(f.Name)) != 1 {
			return nil, nil, invalid("merge_insert: the source has a column %q the table does not have", f.Name)
		}
	}
	parts := make([][]arrow.Array, schema.NumFields())
	defer func() {
		for _, p := range parts {
			for _, a := range p {
				a.Release()
			}
		}
	}()
	for rs.Next() {
		rec := rs.RecordBatch()
		for i, f := range schema.Fields() {
			if perm[i] < 0 {
				parts[i] = append(parts[i], array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(rec.NumRows())))
				continue
			}
			c, err := castTo(ctx, rec.Column(perm[i]), f.Type, f.Name)
			if err != nil {
				return nil, nil, err
			}
			parts[i] = append(parts[i], c)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, nil, invalid("merge_insert: read the source: %v", err)
	}
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for i, f := range schema.Fields() {
		var c arrow.Array
		var err error
		switch len(parts[i]) {
		case 0:
			c = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
		case 1: // one batch (the usual body): no copy of it
			c = parts[i][0]
			c.Retain()
		default:
			if c, err = array.Concatenate(parts[i], memory.DefaultAllocator); err != nil {
				return nil, nil, err
			}
		}
		cols[i] = c
		n = int64(c.Len())
	}
	rec := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, missing, nil
}

// keyer encodes the key of a row as bytes; ok is false when a key column
// is NULL (such a row matches nothing).
type keyer struct{ cols []arrow.Array }

func newKeyer(rec arrow.RecordBatch, idx []int) keyer {
	k := keyer{}
	for _, i := range idx {
		k.cols = append(k.cols, rec.Column(i))
	}
	return k
}

func (k keyer) key(row int, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	for _, c := range k.cols {
		if c.IsNull(row) {
			return nil, false
		}
		switch a := c.(type) {
		case *array.String:
			s := a.Value(row)
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			buf = append(buf, s...)
		case *array.LargeString:
			s := a.Value(row)
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			buf = append(buf, s...)
		case *array.Binary:
			s := a.Value(row)
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			buf = append(buf, s...)
		case *array.Int64:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Value(row)))
		case *array.Int32:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Value(row)))
		case *array.Int16:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Value(row)))
		case *array.Int8:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Value(row)))
		case *array.Uint64:
			buf = binary.LittleEndian.AppendUint64(buf, a.Value(row))
		case *array.Uint32:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Value(row)))
		case *array.Float64:
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(a.Value(row)))
		case *array.Float32:
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(float64(a.Value(row))))
		default:
			s, err := scalar.GetScalar(c, row)
			if err != nil {
				return nil, false
			}
			str := s.String()
			buf = binary.AppendUvarint(buf, uint64(len(str)))
			buf = append(buf, str...)
		}
	}
	return buf, true
}

func keyColumns(schema *arrow.Schema, on []string) ([]int, error) {
	var idx []int
	seen := map[int]bool{}
	for _, name := range on {
		i := schema.FieldIndices(name)
		if len(i) != 1 {
			return nil, invalid("merge_insert: no key column %q in the table", name)
		}
		if seen[i[0]] {
			return nil, invalid("merge_insert: key column %q named twice", name)
		}
		seen[i[0]] = true
		switch schema.Field(i[0]).Type.(type) {
		case *arrow.StructType, *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType, *arrow.MapType:
			return nil, invalid("merge_insert: key column %q is %s; keys must be scalar", name, schema.Field(i[0]).Type)
		}
		idx = append(idx, i[0])
	}
	return idx, nil
}

func mergeOnce(ctx context.Context, ds *lance.Dataset, ver *lance.Version, schema *arrow.Schema, src arrow.RecordBatch, missing []int, m MergeInsert) (Result, error) {
	keys, err := keyColumns(schema, m.On)
	if err != nil {
		return Result{}, err
	}
	// Index the source by key; a key twice is an ambiguous merge.
	index := map[string]int{}
	sk := newKeyer(src, keys)
	var buf []byte
	for r := 0; r < int(src.NumRows()); r++ {
		k, ok := sk.key(r, buf)
		if !ok {
			continue
		}
		if prev, dup := index[string(k)]; dup {
			// Lance refuses this when the key matches a target row and
			// inserts both rows when it does not; the latter is a silent
			// duplicate, refused here too.
			return Result{}, invalid("Ambiguous merge inserts are prohibited: source rows %d and %d have the same key (%s); each key may appear at most once in the source",
				prev, r, describeKey(src, keys, r))
		}
		index[string(k)] = r
	}
	var cond, delCond *expr.Bound
	both := arrow.NewSchema([]arrow.Field{
		{Name: "target", Type: arrow.StructOf(schema.Fields()...), Nullable: true},
		{Name: "source", Type: arrow.StructOf(schema.Fields()...), Nullable: true},
	}, nil)
	if m.WhenMatchedUpdateAll && strings.TrimSpace(m.WhenMatchedUpdateAllFilter) != "" {
		if cond, err = expr.Compile(m.WhenMatchedUpdateAllFilter, both); err != nil {
			return Result{}, err
		}
		if cond.Type().ID() != arrow.BOOL {
			return Result{}, invalid("merge_insert: the when_matched condition is %s, not boolean", cond.Type())
		}
	}
	var delPred *predicate
	if m.WhenNotMatchedBySourceDelete && strings.TrimSpace(m.WhenNotMatchedBySourceDeleteFilter) != "" {
		// Over the target's columns, plain or qualified as target.x.
		if delPred, err = compilePredicate(m.WhenNotMatchedBySourceDeleteFilter, schema); err != nil {
			b, err2 := expr.Compile(m.WhenNotMatchedBySourceDeleteFilter, both)
			if err2 != nil {
				return Result{}, err
			}
			delCond = b
		}
	}

	rows := lance.RowDeletes{}
	matched := make([]bool, src.NumRows())
	var updated, deleted uint64
	var out []arrow.RecordBatch
	defer func() {
		for _, r := range out {
			r.Release()
		}
	}()
	stable := ver.StableRowIDs()
	var ids []uint64 // stable row ids of the updated rows, in out's order
	var ins []arrow.RecordBatch
	defer func() {
		for _, r := range ins {
			r.Release()
		}
	}()
	// Read the whole target only when a condition or a partial source
	// needs its values; else its keys (and the delete filter's columns).
	var scanCols []string
	scanSchema, keysT := schema, keys
	if cond == nil && delCond == nil && len(missing) == 0 {
		want := map[string]bool{}
		for _, k := range keys {
			want[schema.Field(k).Name] = true
		}
		if delPred != nil {
			for _, c := range delPred.cols {
				want[c] = true
			}
		}
		var fields []arrow.Field
		for _, f := range schema.Fields() {
			if want[f.Name] {
				scanCols = append(scanCols, f.Name)
				fields = append(fields, f)
			}
		}
		scanSchema = arrow.NewSchema(fields, nil)
		keysT = nil
		for _, k := range keys {
			keysT = append(keysT, scanSchema.FieldIndices(schema.Field(k).Name)[0])
		}
		if delPred != nil {
			if delPred, err = delPred.bindTo(scanSchema); err != nil {
				return Result{}, err
			}
		}
	}
	scan, err := ds.Scan(ctx, lance.ScanOptions{At: ver, Columns: scanCols, WithRowID: stable, WithRowAddress: true})
	if err != nil {
		return Result{}, err
	}
	defer scan.Release()
	for scan.Next() {
		rec := scan.RecordBatch()
		tk := newKeyer(rec, keysT)
		addrs := rowAddresses(rec)
		var tRows, sRows []int64 // matched pairs
		var unmatched []int64
		for r := 0; r < int(rec.NumRows()); r++ {
			k, ok := tk.key(r, buf)
			s, hit := 0, false
			if ok {
				s, hit = index[string(k)]
			}
			if hit {
				matched[s] = true
				tRows = append(tRows, int64(r))
				sRows = append(sRows, int64(s))
			} else {
				unmatched = append(unmatched, int64(r))
			}
		}
		if m.WhenMatchedUpdateAll && len(tRows) > 0 {
			keep := make([]bool, len(tRows))
			for i := range keep {
				keep[i] = true
			}
			if cond != nil {
				tgt, err := takeRecord(ctx, dropLast(rec, schema), tRows, true)
				if err != nil {
					return Result{}, err
				}
				srcRows, err := takeRecord(ctx, src, sRows, false)
				if err != nil {
					tgt.Release()
					return Result{}, err
				}
				keep, err = evalBoth(ctx, cond, both, tgt, srcRows)
				tgt.Release()
				srcRows.Release()
				if err != nil {
					return Result{}, err
				}
			}
			var upd, updT []int64
			for i, ok := range keep {
				if ok {
					addRow(rows, addrs.Value(int(tRows[i])))
					upd = append(upd, sRows[i])
					updT = append(updT, tRows[i])
					if stable {
						ids = append(ids, rowIDs(rec).Value(int(tRows[i])))
					}
				}
			}
			if len(upd) > 0 {
				r, err := takeRecord(ctx, src, upd, false)
				if err != nil {
					return Result{}, err
				}
				if len(missing) > 0 {
					// Columns the source leaves out keep the target's values.
					tr, err := takeRecord(ctx, dropLast(rec, schema), updT, true)
					if err != nil {
						r.Release()
						return Result{}, err
					}
					cols := slices.Clone(r.Columns())
					for _, i := range missing {
						cols[i] = tr.Column(i)
					}
					nr := array.NewRecordBatch(schema, cols, r.NumRows())
					r.Release()
					tr.Release()
					r = nr
				}
				out = append(out, r)
				updated += uint64(len(upd))
			}
		}
		if m.WhenNotMatchedBySourceDelete && len(unmatched) > 0 {
			keep := make([]bool, len(unmatched))
			for i := range keep {
				keep[i] = true
			}
			if delPred != nil || delCond != nil {
				tgt, err := takeRecord(ctx, dropLast(rec, scanSchema), unmatched, true)
				if err != nil {
					return Result{}, err
				}
				if delPred != nil {
					keep, err = delPred.mask(ctx, tgt)
				} else {
					nulls := make([]arrow.Array, schema.NumFields())
					for i, f := range schema.Fields() {
						nulls[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(tgt.NumRows()))
					}
					nullSrc := array.NewRecordBatch(schema, nulls, tgt.NumRows())
					for _, c := range nulls {
						c.Release()
					}
					keep, err = evalBoth(ctx, delCond, both, tgt, nullSrc)
					nullSrc.Release()
				}
				tgt.Release()
				if err != nil {
					return Result{}, err
				}
			}
			for i, ok := range keep {
				if ok {
					addRow(rows, addrs.Value(int(unmatched[i])))
					deleted++
				}
			}
		}
	}
	if err := scan.Err(); err != nil {
		return Result{}, err
	}
	var inserted uint64
	if m.WhenNotMatchedInsertAll {
		var insRows []int64
		for r, hit := range matched {
			if !hit {
				insRows = append(insRows, int64(r))
			}
		}
		if len(insRows) > 0 {
			r, err := takeRecord(ctx, src, insRows, false)
			if err != nil {
				return Result{}, err
			}
			ins = append(ins, r)
			inserted = uint64(len(insRows))
		}
	}
	var frags []*tablepb.DataFragment
	if stable {
		// Updated rows keep their row ids (their own fragments); inserted
		// rows get new ones when committed, as in Lance.
		if frags, err = lance.WriteFragments(ctx, ds.Store(), schema, ver.Fields(), &sliceStream{schema: schema, recs: out}, writeOptions(ver)); err != nil {
			return Result{}, err
		}
		if err := lance.SetRowIDs(frags, ids); err != nil {
			return Result{}, err
		}
		more, err := lance.WriteFragments(ctx, ds.Store(), schema, ver.Fields(), &sliceStream{schema: schema, recs: ins}, writeOptions(ver))
		if err != nil {
			return Result{}, err
		}
		frags = append(frags, more...)
	} else {
		all := slices.Concat(out, ins)
		if frags, err = lance.WriteFragments(ctx, ds.Store(), schema, ver.Fields(), &sliceStream{schema: schema, recs: all}, writeOptions(ver)); err != nil {
			return Result{}, err
		}
	}
	op := &lance.UpdateRows{Rows: rows, Read: readFragments(ver), NewFragments: frags}
	v, err := ds.Commit(ctx, op, lance.CommitOptions{ReadVersion: ver.Number()})
	if err != nil {
		return Result{}, err
	}
	return Result{Version: v, Inserted: inserted, Updated: updated, Deleted: deleted}, nil
}

// takeRecord is rows of rec (release: rec is released after the take).
func takeRecord(ctx context.Context, rec arrow.RecordBatch, rows []int64, release bool) (arrow.RecordBatch, error) {
	if release {
		defer rec.Release()
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(rows, nil)
	idx := b.NewArray()
	b.Release()
	defer idx.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		c, err := compute.TakeArray(ctx, rec.Column(i), idx)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// evalBoth evaluates a condition over target.* and source.* of matched
// row pairs.
func evalBoth(ctx context.Context, cond *expr.Bound, both *arrow.Schema, tgt, src arrow.RecordBatch) ([]bool, error) {
	t, err := array.NewStructArrayWithFields(tgt.Columns(), tgt.Schema().Fields())
	if err != nil {
		return nil, err
	}
	defer t.Release()
	s, err := array.NewStructArrayWithFields(src.Columns(), src.Schema().Fields())
	if err != nil {
		return nil, err
	}
	defer s.Release()
	rec := array.NewRecordBatch(both, []arrow.Array{t, s}, tgt.NumRows())
	defer rec.Release()
	p := &predicate{bound: cond}
	return p.mask(ctx, rec)
}

func describeKey(rec arrow.RecordBatch, keys []int, row int) string {
	var parts []string
	for _, k := range keys {
		s, err := scalar.GetScalar(rec.Column(k), row)
		v := "?"
		if err == nil {
			v = s.String()
		}
		parts = append(parts, fmt.Sprintf("%s = %s", rec.Schema().Field(k).Name, v))
	}
	return strings.Join(parts, ", ")
}
