package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestMaintenanceCommand: plan changes nothing and says what run would do; run compacts and
// cleans; a second sweep finds the table idle; bad usage is exit 2.
func TestMaintenanceCommand(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "data")
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	ns := namespace.New(fs, namespace.Options{RootURI: root})
	_, err = ns.CreateNamespace(ctx, ident.ID{"a"}, nil, "")
	assert.NilError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	batch := func(from int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		defer b.Release()
		for i := from; i < from+5; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		return b.NewRecordBatch()
	}
	_, _, err = ns.CreateTable(ctx, ident.ID{"a", "t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, batch(0))})
	assert.NilError(t, err)
	tbl, err := ns.LoadTable(ctx, ident.ID{"a", "t"})
	assert.NilError(t, err)
	ds := mustDataset(t, tbl)
	for i := int64(1); i <= 3; i++ {
		rr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch(i * 5)})
		_, err := ds.Append(ctx, rr, lance.WriteOptions{})
		assert.NilError(t, err)
	}

	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"maintenance", args[0], "--root", root}, args[1:]...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := call("plan", "--json", "a$t")
	assert.Equal(t, code, 0, errs)
	var plan maintenance.RunReport
	assert.NilError(t, json.Unmarshal([]byte(out), &plan))
	assert.Equal(t, plan.Step(maintenance.StepCompact).Status, maintenance.StatusWouldDo)
	assert.Equal(t, plan.Version, uint64(4))

	code, out, errs = call("run", "--older-than", "0s", "a$t")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, bytes.Contains([]byte(out), []byte("compact")), out)
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(v.Manifest().GetFragments()), 1)
	vs, err := ds.ListVersions(ctx, lance.ListVersionsOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 1, "older-than 0s keeps only the latest")

	code, out, errs = call("sweep", "--json")
	assert.Equal(t, code, 0, errs)
	var sweep maintenance.SweepReport
	assert.NilError(t, json.Unmarshal([]byte(out), &sweep))
	assert.Equal(t, sweep.Counts[maintenance.OutcomeIdle], 1, out)

	// The run was recorded in the table's task history as the CLI's.
	svc := &maintenance.Service{Catalog: ns}
	recs, err := svc.TableTasks(ctx, ident.ID{"a", "t"})
	assert.NilError(t, err)
	assert.Assert(t, len(recs) >= 1)
	assert.Equal(t, recs[len(recs)-1].Origin, maintenance.OriginCLI)

	// orphans reports a stray data file; reconcile --dry-run keeps it; reconcile removes it.
	_, err = ds.Store().Put(ctx, "data/stray.lance", bytes.NewReader([]byte("x")), 1)
	assert.NilError(t, err)
	code, out, errs = call("orphans", "--json", "--grace", "1ns", "a")
	assert.Equal(t, code, 0, errs)
	var orph maintenance.OrphanReport
	assert.NilError(t, json.Unmarshal([]byte(out), &orph))
	assert.Equal(t, len(orph.Findings), 1, out)
	assert.Equal(t, orph.Findings[0].Key, "data/stray.lance")
	assert.Equal(t, orph.Findings[0].Action, "delete")
	code, out, errs = call("reconcile", "--dry-run", "--grace", "1ns", "a$t")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, bytes.Contains([]byte(out), []byte("would remove 1 files")), out)
	_, err = ds.Store().Stat(ctx, "data/stray.lance")
	assert.NilError(t, err)
	code, out, errs = call("reconcile", "--grace", "1ns")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, bytes.Contains([]byte(out), []byte("removed 1 files")), out)
	_, err = ds.Store().Stat(ctx, "data/stray.lance")
	assert.ErrorIs(t, err, storage.ErrNotFound)

	code, _, _ = call("run", "--steps", "vacuum", "a$t")
	assert.Equal(t, code, 2)
	code, _, _ = call("plan")
	assert.Equal(t, code, 2)
}
