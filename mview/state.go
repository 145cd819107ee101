package mview

// The group state of an aggregate view: what an incremental refresh continues from. For every
// group (all of them, also those HAVING or LIMIT leave out of the view's rows) its key values
// and, per aggregate, the accumulator the executor held after the last refresh's rows: the
// count of non-null values, the integer and float running sums (avg's hidden state: sum and
// count) and min/max's best value. It is not a column of the view (a reader of the view, such as
// the official SDK, sees exactly the declared columns): it is an Arrow IPC file beside the task
// log on the view table's root (_maintenance/, which Lance never lists and the orphan scan
// leaves alone), named by a fresh uuid and written before the refresh's commit; the commit's
// State names it with its digest. So the state the view's head names always describes exactly
// the head's rows: a refresh that crashes before its commit leaves an unnamed file and the old
// head naming the old file, which is still there (files are removed only by a refresh that
// committed, under the view's lease: every file its new head does not name).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lancecat/lancecat/internal/arrowipc"
	"github.com/lancecat/lancecat/storage"
)

// stateDir holds a view's group state files and its refresh claim on the view table's root.
const stateDir = "_maintenance/materialized_view/"

// GroupState names the group state file of a view's rows.
type GroupState struct {
	Path   string `json:"path"` // under the view table's root
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Groups int64  `json:"groups"`
}

// mergeBlocker says why an incremental refresh of the plan's view cannot merge new source rows
// into its rows ("": it can).
func (p *Plan) mergeBlocker() string {
	if !p.agg {
		switch {
		case len(p.order) > 0 && (p.Query.Limit != nil || p.Query.Offset > 0):
			return "ORDER BY with LIMIT/OFFSET over per-row rows: which rows are kept depends on every row"
		case len(p.order) > 0:
			return "ORDER BY over per-row rows: new rows go anywhere in the order"
		case p.Query.Limit != nil || p.Query.Offset > 0:
			return "LIMIT/OFFSET over per-row rows: which rows are kept depends on every row"
		}
		return ""
	}
	for _, a := range p.aggs {
		if a.distinct {
			return "count(DISTINCT): merging needs every distinct value seen per group, which is not kept"
		}
	}
	return ""
}

// stateSchema is the schema of the plan's group state.
func (p *Plan) stateSchema() *arrow.Schema {
	var fields []arrow.Field
	for i, g := range p.groups {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("g%d", i), Type: g.Type(), Nullable: true})
	}
	for i, a := range p.aggs {
		fields = append(fields,
			arrow.Field{Name: fmt.Sprintf("a%d_n", i), Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: fmt.Sprintf("a%d_sum_i", i), Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: fmt.Sprintf("a%d_sum_f", i), Type: arrow.PrimitiveTypes.Float64})
		if a.fn == "min" || a.fn == "max" {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("a%d_best", i), Type: a.out, Nullable: true})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// state is the executor's groups as a group state record (first-seen order).
func (x *executor) state() (arrow.RecordBatch, error) {
	p := x.p
	schema := p.stateSchema()
	cols := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i := range p.groups {
		parts := make([]arrow.Array, len(x.order))
		for j, g := range x.order {
			parts[j] = g.keys[i]
		}
		c, err := concatArrays(x.mem, p.groups[i].Type(), parts)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	for i, a := range p.aggs {
		n, si := array.NewInt64Builder(x.mem), array.NewInt64Builder(x.mem)
		sf := array.NewFloat64Builder(x.mem)
		for _, g := range x.order {
			s := g.accs[i]
			n.Append(s.n)
			si.Append(s.sumI)
			sf.Append(s.sumF)
		}
		cols = append(cols, n.NewArray(), si.NewArray(), sf.NewArray())
		n.Release()
		si.Release()
		sf.Release()
		if a.fn == "min" || a.fn == "max" {
			c, err := x.aggColumn(i, a)
			if err != nil {
				return nil, err
			}
			cols = append(cols, c)
		}
	}
	return array.NewRecordBatch(schema, cols, int64(len(x.order))), nil
}

// seed makes the groups of a state record (of the plan's stateSchema), in its order.
func (x *executor) seed(st arrow.RecordBatch) error {
	p := x.p
	if !sameFields(st.Schema(), p.stateSchema()) {
		return errors.New("mview: the group state does not match the view's query")
	}
	keys := st.Columns()[:len(p.groups)]
	var kb []byte
	for r := 0; r < int(st.NumRows()); r++ {
		g, fresh := x.groupOf(keys, r, &kb)
		if !fresh {
			return fmt.Errorf("mview: the group state holds group %d twice", r)
		}
		c := len(p.groups)
		for i, a := range p.aggs {
			s := &g.accs[i]
			s.n = st.Column(c).(*array.Int64).Value(r)
			s.sumI = st.Column(c + 1).(*array.Int64).Value(r)
			s.sumF = st.Column(c + 2).(*array.Float64).Value(r)
			c += 3
			if a.fn == "min" || a.fn == "max" {
				if best := st.Column(c); !best.IsNull(r) {
					s.best = array.NewSlice(best, int64(r), int64(r+1))
				}
				c++
			}
		}
	}
	return nil
}

// writeState writes st as a new state file on the view table's root.
func writeState(ctx context.Context, store storage.Writer, st arrow.RecordBatch) (*GroupState, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(st.Schema()), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Write(st); err != nil {
		return nil, fmt.Errorf("mview: group state: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("mview: group state: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	gs := &GroupState{Path: stateDir + "state-" + uuid.NewString() + ".arrows", SHA256: hex.EncodeToString(sum[:]),
		Bytes: int64(buf.Len()), Groups: st.NumRows()}
	if _, err := store.PutIfAbsent(ctx, gs.Path, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		return nil, fmt.Errorf("mview: group state: %w", err)
	}
	return gs, nil
}

// readState reads the state file gs names, checking it is the one written (its digest) and
// that it is the plan's state. An error is a reason to recompute, never to fail the refresh.
func readState(ctx context.Context, store storage.Reader, gs *GroupState, p *Plan) (arrow.RecordBatch, error) {
	if !strings.HasPrefix(gs.Path, stateDir) || gs.Bytes < 0 {
		return nil, fmt.Errorf("group state path %q is not this server's", gs.Path)
	}
	rc, _, err := store.Get(ctx, gs.Path)
	if err != nil {
		return nil, fmt.Errorf("group state %s: %w", gs.Path, err)
	}
	body, err := io.ReadAll(io.LimitReader(rc, gs.Bytes+1))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("group state %s: %w", gs.Path, err)
	}
	sum := sha256.Sum256(body)
	if int64(len(body)) != gs.Bytes || hex.EncodeToString(sum[:]) != gs.SHA256 {
		return nil, fmt.Errorf("group state %s is not the file the view's commit names (size or digest differs)", gs.Path)
	}
	schema, recs, err := arrowipc.ReadStream(body)
	if err != nil {
		return nil, fmt.Errorf("group state %s: %w", gs.Path, err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	want := p.stateSchema()
	if schema == nil || !sameFields(schema, want) {
		return nil, fmt.Errorf("group state %s does not match the view's query over the source's schema now", gs.Path)
	}
	return concat(memory.DefaultAllocator, want, recs)
}

// sweepStates removes the state files under the view table's root other than keep. Errors are
// ignored: a file left is only a stray.
func sweepStates(ctx context.Context, store storage.Bucket, keep string) {
	objs, err := storage.ListAll(ctx, store, stateDir+"state-")
	if err != nil {
		return
	}
	for _, o := range objs {
		if o.Key != keep && strings.HasPrefix(o.Key, stateDir+"state-") {
			_ = store.Delete(ctx, o.Key)
		}
	}
}
