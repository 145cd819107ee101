package governed

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/mview"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// fakeViews is a views service recording the calls that reached it; a view's source is ns$src,
// and a query "bad" does not parse.
type fakeViews struct {
	ViewService
	calls []string
}

func (f *fakeViews) QuerySource(view ident.ID, sql string) (ident.ID, error) {
	if sql == "bad" {
		return nil, nserr.InvalidInputf("syntax error")
	}
	return ident.ID{"ns", "src"}, nil
}

func (f *fakeViews) Source(context.Context, ident.ID) (ident.ID, error) {
	return ident.ID{"ns", "src"}, nil
}

func (f *fakeViews) Create(_ context.Context, id ident.ID, _ string, _ bool) (uint64, string, error) {
	f.calls = append(f.calls, "create "+key(id))
	return 1, "job", nil
}

func (f *fakeViews) Refresh(_ context.Context, id ident.ID, _ *int64) (string, error) {
	f.calls = append(f.calls, "refresh "+key(id))
	return "job", nil
}

// TestViewSourceRead (moved from the view handlers): creating or refreshing a materialized view
// reads its source with the caller's authority, so it requires the source's read door (table
// query) first; a denied caller creates or refreshes nothing. A query that does not parse is
// refused before anything is checked; authorization off checks nothing.
func TestViewSourceRead(t *testing.T) {
	ctx := context.Background()
	view := ident.ID{"ns", "mv"}
	for _, tc := range []struct {
		name      string
		do        func(v *Views) error
		denied    bool
		off       bool
		code      nserr.Code
		wantCheck []authz.Action
		wantCalls []string
	}{
		{name: "create", do: func(v *Views) error { _, _, err := v.Create(ctx, view, "SELECT a FROM src", false); return err },
			wantCheck: []authz.Action{authz.TableQuery}, wantCalls: []string{"create ns$mv"}},
		{name: "create denied", do: func(v *Views) error { _, _, err := v.Create(ctx, view, "SELECT a FROM src", false); return err },
			denied: true, code: nserr.PermissionDenied, wantCheck: []authz.Action{authz.TableQuery}},
		{name: "create of a query that does not parse", do: func(v *Views) error { _, _, err := v.Create(ctx, view, "bad", false); return err },
			denied: true, code: nserr.InvalidInput},
		{name: "refresh", do: func(v *Views) error { _, err := v.Refresh(ctx, view, nil); return err },
			wantCheck: []authz.Action{authz.TableQuery}, wantCalls: []string{"refresh ns$mv"}},
		{name: "refresh denied", do: func(v *Views) error { _, err := v.Refresh(ctx, view, nil); return err },
			denied: true, code: nserr.PermissionDenied, wantCheck: []authz.Action{authz.TableQuery}},
		{name: "authorization off", do: func(v *Views) error { _, err := v.Refresh(ctx, view, nil); return err },
			off: true, wantCalls: []string{"refresh ns$mv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.TableQuery: tc.denied}}
			opts := Options{Authorizer: a}
			if tc.off {
				opts.Authorizer = nil
			}
			inner := &fakeViews{}
			err := tc.do(New(newFake([]string{"ns"}, []string{"ns$src", "ns$mv"}), opts).Views(inner))
			if tc.code == 0 {
				assert.NilError(t, err)
			} else {
				assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			}
			assert.DeepEqual(t, a.checked, tc.wantCheck)
			assert.DeepEqual(t, inner.calls, tc.wantCalls)
		})
	}
}

// eventLog is the records keeping every event with its attributes (the views' jobs record theirs
// from their own goroutines).
type eventLog struct {
	*fakeRecords
	mu     sync.Mutex
	events []string
	attrs  []map[string]string
}

func (l *eventLog) Changed(_ context.Context, _ authz.Principal, event, _ string, id ident.ID, attrs map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event+" "+key(id))
	l.attrs = append(l.attrs, attrs)
}

// TestViewWritesRecordTheirEvents (seam review point 3): the writes package mview makes beside
// the table handle (a computed column's declaration, its backfill's checkpoints, a view's table
// and refresh) commit through the governed catalog the composition root gives it, so each records
// its event as the plain doors do, a computed column's declaration saying it is computed.
func TestViewWritesRecordTheirEvents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	log := &eventLog{fakeRecords: &fakeRecords{}}
	g := New(namespace.New(fs, namespace.Options{RootURI: dir}), Options{Records: log})
	svc := &mview.Service{Catalog: g, Holder: "test"}
	views := g.Views(svc)

	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	_, _, err = g.CreateTable(ctx, ident.ID{"t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)

	tbl, err := g.LoadTable(ctx, ident.ID{"t"})
	assert.NilError(t, err)
	_, err = views.DeclareComputed(ctx, tbl, []catalog.ComputedColumn{{Name: "tri", Expr: "id * 3"}})
	assert.NilError(t, err)
	_, err = views.Backfill(ctx, tbl, catalog.BackfillRequest{Table: ident.ID{"t"}, Column: "tri"})
	assert.NilError(t, err)
	svc.Wait()
	_, _, err = views.Create(ctx, ident.ID{"mv"}, "SELECT id FROM t", false)
	assert.NilError(t, err)
	svc.Wait()

	log.mu.Lock()
	defer log.mu.Unlock()
	assert.DeepEqual(t, log.events, []string{
		governance.EventTableCreated + " t",
		governance.EventTableColumnsAdded + " t",
		governance.EventTableColumnBackfilled + " t",
		governance.EventTableCreated + " mv",
		governance.EventTableViewRefreshed + " mv",
	})
	assert.Equal(t, log.attrs[1]["computed"], "true")
	assert.Equal(t, log.attrs[1]["columns"], "tri")
	assert.Equal(t, log.attrs[2]["column"], "tri")
}
