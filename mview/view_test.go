package mview

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// root is a catalog on local disk with table "sales" holding the two batches of sales().
func root(t *testing.T) (*namespace.Namespace, *Service) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ns := namespace.New(store, namespace.Options{RootURI: dir})
	schema, recs := sales(t)
	_, _, err = ns.CreateTable(ctx, ident.ID{"sales"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, recs[:1]...)})
	assert.NilError(t, err)
	appendSales(t, ns, recs[1])
	return ns, &Service{Catalog: ns, Holder: "test"}
}

func appendSales(t *testing.T, ns *namespace.Namespace, rec arrow.RecordBatch) {
	t.Helper()
	ctx := context.Background()
	tbl, err := ns.LoadTable(ctx, ident.ID{"sales"})
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	_, err = ds.Append(ctx, &oneBatch{rec: rec, schema: rec.Schema()}, lance.WriteOptions{})
	assert.NilError(t, err)
}

// viewRows reads view id's rows (as a client does: a scan of its table) rendered.
func viewRows(t *testing.T, ns *namespace.Namespace, id ident.ID) string {
	t.Helper()
	return readView(t, ns, id, render)
}

// readView scans view id's table as a client does and returns its rows, all of them in one
// record, as show renders them.
func readView(t *testing.T, ns *namespace.Namespace, id ident.ID, show func(arrow.RecordBatch) string) string {
	t.Helper()
	ctx := context.Background()
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	s, err := ds.Scan(ctx, lance.ScanOptions{})
	assert.NilError(t, err)
	defer s.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for s.Next() {
		r := s.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	assert.NilError(t, s.Err())
	all, err := concat(testenv.CheckedAllocator(t), s.Schema(), recs)
	assert.NilError(t, err)
	defer all.Release()
	return show(all)
}

func lastTask(t *testing.T, ns *namespace.Namespace, id ident.ID) tasks.Record {
	t.Helper()
	tbl, err := ns.LoadTable(context.Background(), id)
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	recs, err := (&tasks.Log{Store: ds.Store()}).List(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, len(recs) > 0)
	return recs[0]
}

// TestViewCreateRefresh: a view's rows are its query's over the source, in its table; with_no_data
// creates it empty with the query's schema; a refresh is a task in the view's history; after
// appends to the source a per-row view and an aggregate one refresh incrementally (only the new
// rows read); a change other than an append recomputes.
func TestViewCreateRefresh(t *testing.T) {
	ctx := context.Background()
	ns, svc := root(t)
	_, recs := sales(t)

	// An aggregate view, filled at create.
	v, job, err := svc.Create(ctx, ident.ID{"by_region"}, "SELECT region, count(*) AS n, sum(qty) AS q FROM sales WHERE price >= 20 GROUP BY region ORDER BY q DESC", false)
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(1))
	assert.Assert(t, job != "")
	svc.Wait()
	task := lastTask(t, ns, ident.ID{"by_region"})
	assert.Equal(t, task.ID, job)
	assert.Equal(t, task.State, tasks.StateSucceeded, task.Error)
	assert.Equal(t, viewRows(t, ns, ident.ID{"by_region"}), "eu,2,9;us,2,7;ap,1,4")

	// A per-row view created empty: the schema is the query's.
	_, job, err = svc.Create(ctx, ident.ID{"big"}, "SELECT region, qty * price AS amount FROM sales WHERE qty > 1", true)
	assert.NilError(t, err)
	assert.Equal(t, job, "")
	tbl, err := ns.LoadTable(ctx, ident.ID{"big"})
	assert.NilError(t, err)
	st, err := tbl.State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(st.Schema.Fields), 2)
	assert.Equal(t, st.Schema.Fields[1].Name, "amount")
	assert.Equal(t, viewRows(t, ns, ident.ID{"big"}), "")

	// First refresh: full (never refreshed).
	_, err = svc.Refresh(ctx, ident.ID{"big"}, nil)
	assert.NilError(t, err)
	svc.Wait()
	var res RefreshResult
	task = lastTask(t, ns, ident.ID{"big"})
	assert.Equal(t, task.State, tasks.StateSucceeded, task.Error)
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	assert.Equal(t, res.Mode, "full")
	assert.Equal(t, viewRows(t, ns, ident.ID{"big"}), "us,40;eu,90;ap,160;us,250;eu,360")

	// Appends: incremental for both (the per-row view computes the new rows; the aggregate one
	// merges them into its groups, reading only the appended rows).
	appendSales(t, ns, recs[0])
	for _, id := range []string{"big", "by_region"} {
		_, err = svc.Refresh(ctx, ident.ID{id}, nil)
		assert.NilError(t, err)
	}
	svc.Wait()
	task = lastTask(t, ns, ident.ID{"big"})
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	assert.Equal(t, res.Mode, "incremental")
	assert.Equal(t, res.Rows, int64(2))
	assert.Equal(t, viewRows(t, ns, ident.ID{"big"}), "us,40;eu,90;ap,160;us,250;eu,360;us,40;eu,90")
	task = lastTask(t, ns, ident.ID{"by_region"})
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	assert.Equal(t, res.Mode, "incremental", res.Reason)
	assert.Equal(t, res.SourceRowsRead, int64(3))
	assert.Equal(t, viewRows(t, ns, ident.ID{"by_region"}), "eu,3,12;us,3,9;ap,1,4")

	// A delete in the source is not an append: the per-row view recomputes.
	src, err := ns.LoadTable(ctx, ident.ID{"sales"})
	assert.NilError(t, err)
	_, err = src.Delete(ctx, "", "region = 'us'")
	assert.NilError(t, err)
	_, err = svc.Refresh(ctx, ident.ID{"big"}, nil)
	assert.NilError(t, err)
	svc.Wait()
	task = lastTask(t, ns, ident.ID{"big"})
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	assert.Equal(t, res.Mode, "full")
	assert.Equal(t, viewRows(t, ns, ident.ID{"big"}), "eu,90;ap,160;eu,360;eu,90")

	// A refresh with nothing new keeps the rows.
	_, err = svc.Refresh(ctx, ident.ID{"big"}, nil)
	assert.NilError(t, err)
	svc.Wait()
	task = lastTask(t, ns, ident.ID{"big"})
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	assert.Equal(t, res.Mode, "incremental")
	assert.Equal(t, res.Rows, int64(0))
	assert.Equal(t, viewRows(t, ns, ident.ID{"big"}), "eu,90;ap,160;eu,360;eu,90")
}

// TestViewCreateErrors: bad SQL is 400 naming the position, an unknown source 404, and nothing
// is created.
func TestViewCreateErrors(t *testing.T) {
	ctx := context.Background()
	ns, svc := root(t)
	_, _, err := svc.Create(ctx, ident.ID{"v"}, "SELECT region FROM sales WHERE qty >", true)
	var ne *nserr.Error
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%v", err)
	assert.ErrorContains(t, err, "position")
	_, _, err = svc.Create(ctx, ident.ID{"v"}, "SELECT a FROM nope", true)
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.TableNotFound, "%v", err)
	_, _, err = svc.Create(ctx, ident.ID{"v"}, "SELECT nope FROM sales", true)
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%v", err)
	_, err = ns.DescribeTable(ctx, ident.ID{"v"})
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.TableNotFound, "%v", err)
	// A table that is not a view cannot be refreshed.
	_, err = svc.Refresh(ctx, ident.ID{"sales"}, nil)
	assert.ErrorContains(t, err, "not a materialized view")
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
