package mview

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
)

// salesTable is a handle of table sales (what the doors hand mview).
func salesTable(t *testing.T, ns *namespace.Namespace) catalog.Table {
	t.Helper()
	tbl, err := ns.LoadTable(context.Background(), ident.ID{"sales"})
	assert.NilError(t, err)
	return tbl
}

func salesDataset(t *testing.T, ns *namespace.Namespace) *lance.Dataset {
	t.Helper()
	tbl, err := ns.LoadTable(context.Background(), ident.ID{"sales"})
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	return ds
}

// column reads one column of sales rendered (rows in scan order).
func column(t *testing.T, ds *lance.Dataset, name string) string {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{name}})
	assert.NilError(t, err)
	defer s.Release()
	var vals []string
	for s.Next() {
		r := s.RecordBatch()
		for i := 0; i < int(r.NumRows()); i++ {
			vals = append(vals, r.Column(0).ValueStr(i))
		}
	}
	assert.NilError(t, s.Err())
	return strings.Join(vals, ",")
}

// TestBackfillCrashResume: a computed column is declared all-null; its backfill commits a
// checkpoint per batch of fragments; a job cut off after its first checkpoint (a fault hook
// standing in for a crash: its record is left running) leaves the filled fragments filled and
// the others null, every version readable; the next backfill resumes from the checkpoint (skips
// the filled fragments) and the column ends equal to its expression on every row.
func TestBackfillCrashResume(t *testing.T) {
	ctx := context.Background()
	ns, svc := root(t)
	_, recs := sales(t)
	for range 3 {
		appendSales(t, ns, recs[0])
	}
	ds := salesDataset(t, ns) // 5 fragments of 3 rows
	_, err := svc.DeclareComputed(ctx, salesTable(t, ns), []catalog.ComputedColumn{{Name: "amount", Expr: "qty * price"}})
	assert.NilError(t, err)
	assert.Equal(t, column(t, ds, "amount"), strings.TrimSuffix(strings.Repeat("(null),", 15), ","))

	var checkpoints atomic.Int32
	svc.hook = func(point string) error {
		if point == "backfill.checkpoint" && checkpoints.Add(1) == 1 {
			return errCrash
		}
		return nil
	}
	job1, err := svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "amount", Batch: 2})
	assert.NilError(t, err)
	svc.Wait()
	recsT, err := (&tasks.Log{Store: ds.Store()}).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recsT[0].ID, job1)
	assert.Equal(t, recsT[0].State, tasks.StateRunning) // its writer "died"
	assert.Equal(t, column(t, ds, "amount"), "10,40,90,160,250,360,(null),(null),(null),(null),(null),(null),(null),(null),(null)")

	job2, err := svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "amount", Batch: 2})
	assert.NilError(t, err)
	svc.Wait()
	recsT, err = (&tasks.Log{Store: ds.Store()}).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recsT[0].ID, job2)
	assert.Equal(t, recsT[0].State, tasks.StateSucceeded, recsT[0].Error)
	var res BackfillResult
	assert.NilError(t, json.Unmarshal(recsT[0].Result, &res))
	assert.Equal(t, res.Resumed, 2)
	assert.Equal(t, res.Filled, 3)
	assert.Equal(t, res.ResumedOf, job1)
	want := "10,40,90,160,250,360,10,40,90,10,40,90,10,40,90"
	assert.Equal(t, column(t, ds, "amount"), want)

	// Prices of 'us' double (the updated rows keep their old amount); a backfill filtered to
	// 'us' brings them back in line and touches no other row.
	src, err := ns.LoadTable(ctx, ident.ID{"sales"})
	assert.NilError(t, err)
	_, err = src.Update(ctx, "", "region = 'us'", []dml.Assignment{{Column: "price", Expr: "price * 2"}})
	assert.NilError(t, err)
	stale := func() uint64 {
		n, _, err := src.Count(ctx, catalog.ReadAt{}, "amount != qty * price")
		assert.NilError(t, err)
		return n
	}
	src, err = ns.LoadTable(ctx, ident.ID{"sales"}) // a handle reads its latest version once
	assert.NilError(t, err)
	assert.Equal(t, stale(), uint64(5))
	svc.hook = nil
	_, err = svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "amount", Where: "region = 'us' AND price >= 100"})
	assert.NilError(t, err)
	svc.Wait()
	src, err = ns.LoadTable(ctx, ident.ID{"sales"})
	assert.NilError(t, err)
	assert.Equal(t, stale(), uint64(4)) // only the us row whose price became 100
}

// TestBackfillRefusals: a plain column is 400, a UDF-backed one 406 saying why, an unknown one
// TableColumnNotFound.
func TestBackfillRefusals(t *testing.T) {
	ctx := context.Background()
	ns, svc := root(t)
	_, err := svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "qty"})
	var ne *nserr.Error
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%v", err)
	_, err = svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "nope"})
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.TableColumnNotFound, "%v", err)
	tbl, err := ns.LoadTable(ctx, ident.ID{"sales"})
	assert.NilError(t, err)
	_, _, err = tbl.UpdateFieldMetadata(ctx, "", []catalog.FieldMetadataUpdate{{Path: "price", Metadata: lance.MetadataUpdate{"virtual_column.udf": ptrTo("abc")}}})
	assert.NilError(t, err)
	_, err = svc.Backfill(ctx, salesTable(t, ns), catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "price"})
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.Unsupported, "%v", err)
	assert.ErrorContains(t, err, "no user-code runtime")
	_, err = svc.DeclareComputed(ctx, salesTable(t, ns), []catalog.ComputedColumn{{Name: "bad", Expr: "qty +"}})
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%v", err)
}

func ptrTo[T any](v T) *T { return &v }

// TestBackfillAndRefreshBounds: the numbers of the two doors are checked by the service, not
// only by the HTTP handler: a negative checkpoint_size and a src_version that is not a version
// are 400 naming the parameter; a checkpoint_size over the table's fragments is the whole table
// in one commit.
func TestBackfillAndRefreshBounds(t *testing.T) {
	ctx := context.Background()
	ns, svc := root(t)
	_, recs := sales(t)
	appendSales(t, ns, recs[0])
	tbl, ds := salesTable(t, ns), salesDataset(t, ns) // 3 fragments
	_, err := svc.DeclareComputed(ctx, tbl, []catalog.ComputedColumn{{Name: "amount", Expr: "qty * price"}})
	assert.NilError(t, err)
	var ne *nserr.Error
	for _, batch := range []int{-1, math.MinInt} {
		_, err := svc.Backfill(ctx, tbl, catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "amount", Batch: batch})
		assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%d: %v", batch, err)
		assert.ErrorContains(t, err, "checkpoint_size")
	}
	for _, v := range []int64{0, -1, math.MinInt64} {
		_, err := svc.Refresh(ctx, ident.ID{"sales"}, &v)
		assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%d: %v", v, err)
		assert.ErrorContains(t, err, "src_version")
	}
	_, err = svc.Backfill(ctx, tbl, catalog.BackfillRequest{Table: ident.ID{"sales"}, Column: "amount", Batch: math.MaxInt})
	assert.NilError(t, err)
	svc.Wait()
	list, err := (&tasks.Log{Store: ds.Store()}).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, list[0].State, tasks.StateSucceeded, list[0].Error)
	var res BackfillResult
	assert.NilError(t, json.Unmarshal(list[0].Result, &res))
	assert.Equal(t, res.Commits, 1)
	assert.Equal(t, res.Filled, 3)
}
