package governed

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// writingTable answers every data write with version 7 (or fail), and counts the calls.
type writingTable struct {
	catalog.Table
	fail  error
	calls int
}

func (w *writingTable) result() (catalog.WriteResult, error) {
	w.calls++
	return catalog.WriteResult{Version: 7, Inserted: 2, Updated: 1}, w.fail
}

func (w *writingTable) Insert(context.Context, string, lance.RecordStream, bool) (catalog.WriteResult, error) {
	return w.result()
}
func (w *writingTable) Merge(context.Context, string, lance.RecordStream, dml.MergeInsert) (catalog.WriteResult, error) {
	return w.result()
}
func (w *writingTable) Update(context.Context, string, string, []dml.Assignment) (catalog.WriteResult, error) {
	return w.result()
}
func (w *writingTable) Delete(context.Context, string, string) (catalog.WriteResult, error) {
	return w.result()
}
func (w *writingTable) AddColumns(context.Context, string, []dml.NewColumn) (uint64, error) {
	r, err := w.result()
	return r.Version, err
}
func (w *writingTable) AlterColumns(context.Context, string, []dml.Alteration) (uint64, error) {
	r, err := w.result()
	return r.Version, err
}
func (w *writingTable) DropColumns(context.Context, string, []string) (uint64, error) {
	r, err := w.result()
	return r.Version, err
}

type tableCatalog struct {
	Inner
	t *writingTable
}

func (c *tableCatalog) LoadTable(context.Context, ident.ID) (catalog.Table, error) { return c.t, nil }

// recordedAttrs keeps the attributes of the events too (fakeRecords keeps their names).
type recordedAttrs struct {
	fakeRecords
	attrs []map[string]string
}

func (r *recordedAttrs) Changed(ctx context.Context, p authz.Principal, event, kind string, id ident.ID, attrs map[string]string) {
	r.fakeRecords.Changed(ctx, p, event, kind, id, attrs)
	r.attrs = append(r.attrs, attrs)
}

// TestDataWriteEvents: each data write through a governed handle records its event naming the
// table, the committed version, the branch and what changed; a failed write records none.
func TestDataWriteEvents(t *testing.T) {
	ctx := context.Background()
	id := ident.ID{"ns", "t"}
	cases := []struct {
		name  string
		write func(catalog.Table) error
		event string
		attr  [2]string // one attribute the event must carry
	}{
		{"insert", func(h catalog.Table) error { _, err := h.Insert(ctx, "", nil, false); return err },
			governance.EventTableRowsInserted, [2]string{"inserted", "2"}},
		{"overwrite", func(h catalog.Table) error { _, err := h.Insert(ctx, "", nil, true); return err },
			governance.EventTableOverwritten, [2]string{"inserted", "2"}},
		{"merge", func(h catalog.Table) error { _, err := h.Merge(ctx, "", nil, dml.MergeInsert{}); return err },
			governance.EventTableRowsMerged, [2]string{"updated", "1"}},
		{"update", func(h catalog.Table) error { _, err := h.Update(ctx, "", "id > 1", nil); return err },
			governance.EventTableRowsUpdated, [2]string{"updated", "1"}},
		{"delete", func(h catalog.Table) error { _, err := h.Delete(ctx, "", "id > 1"); return err },
			governance.EventTableRowsDeleted, [2]string{"deleted", "0"}},
		{"add columns", func(h catalog.Table) error {
			_, err := h.AddColumns(ctx, "", []dml.NewColumn{{Name: "a", Expr: "1"}, {Name: "b", Expr: "2"}})
			return err
		}, governance.EventTableColumnsAdded, [2]string{"columns", "a,b"}},
		{"alter columns", func(h catalog.Table) error {
			_, err := h.AlterColumns(ctx, "", []dml.Alteration{{Path: "s.x"}})
			return err
		}, governance.EventTableColumnsAltered, [2]string{"columns", "s.x"}},
		{"drop columns", func(h catalog.Table) error { _, err := h.DropColumns(ctx, "", []string{"v"}); return err },
			governance.EventTableColumnsDropped, [2]string{"columns", "v"}},
		{"on a branch", func(h catalog.Table) error { _, err := h.Insert(ctx, "dev", nil, false); return err },
			governance.EventTableRowsInserted, [2]string{"branch", "dev"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordedAttrs{}
			inner := &tableCatalog{t: &writingTable{}}
			h, err := New(inner, Options{Records: rec}).LoadTable(ctx, id)
			assert.NilError(t, err)
			assert.NilError(t, tc.write(h))
			assert.DeepEqual(t, rec.events, []string{tc.event + " ns$t"})
			assert.Equal(t, rec.attrs[0]["version"], "7")
			assert.Equal(t, rec.attrs[0][tc.attr[0]], tc.attr[1])

			// the same write failing: no event
			rec = &recordedAttrs{}
			inner.t.fail = errors.New("conflict")
			h, err = New(inner, Options{Records: rec}).LoadTable(ctx, id)
			assert.NilError(t, err)
			assert.ErrorContains(t, tc.write(h), "conflict")
			assert.Equal(t, len(rec.events), 0)
		})
	}
}
