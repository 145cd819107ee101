package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
)

// TestSDKRemoteScalarIndices: the official SDK in remote mode (db:// with hostOverride) creates
// BTREE and BITMAP indices through create_index (default name <column>_idx), lists them with
// their types and columns, reads their stats, drops one (a second drop is "not found") and is
// refused a vector index with a message naming the follow-up: for every SDK version given.
// scripts/index/sdk-remote-index.mjs checks the values.
func TestSDKRemoteScalarIndices(t *testing.T) {
	dirs := testenv.SDKs(t)
	ctx := context.Background()
	cfg, ns := seededRoot(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range 200 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i % 4))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for i := range dirs {
		_, _, err := ns.CreateTable(ctx, ident.ID{fmt.Sprintf("nums%d", i)}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		assert.NilError(t, err)
	}
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runIndexScript(t, ctx, 2*time.Minute, "sdk-remote-index.mjs", dir, url, fmt.Sprintf("nums%d", i))
		})
	}
}

// TestSDKRemoteBackgroundIndex: with builds in the background from 100 rows, the official SDK in
// remote mode creates an IVF_PQ index with waitTimeoutSeconds and a BTREE index followed by
// waitForIndex: the create answers before the build ends and the SDK's own wait (list_indices +
// index stats until no unindexed rows) returns once it committed; the index then serves a search
// that finds the exact row, and GET /v1/table/{id}/tasks lists both builds succeeded. For every
// SDK version given; scripts/index/sdk-remote-background.mjs checks the values.
func TestSDKRemoteBackgroundIndex(t *testing.T) {
	// In a namespace: the tasks door takes namespaced table ids.
	runVectorIndexScripts(t, func(cfg *app.Config) { cfg.IndexBuild.BackgroundRows = 100 }, "bg", "sdk-remote-background.mjs")
}

// runVectorIndexScripts serves a root (configure, if not nil, adjusts its config) holding, for
// each SDK version given, a table ns$<prefix><i> of 600 vectors (seedVectorTables), and runs
// scripts/index/<name> with that version on it (arguments: the table and its row count).
func runVectorIndexScripts(t *testing.T, configure func(*app.Config), prefix, name string) {
	t.Helper()
	dirs := testenv.SDKs(t)
	cfg, ns := seededRoot(t)
	if configure != nil {
		configure(&cfg)
	}
	const rows = 600
	seedVectorTables(t, ns, prefix, len(dirs), rows)
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runIndexScript(t, context.Background(), 3*time.Minute, name, dir, url, fmt.Sprintf("ns$%s%d", prefix, i), fmt.Sprint(rows))
		})
	}
}

// seedVectorTables creates namespace ns and in it n tables <prefix>0, <prefix>1, … (one for each
// SDK version) of rows rows: id and a 16-wide vec, a deterministic spread of points (no two rows
// alike).
func seedVectorTables(t *testing.T, nsp *namespace.Namespace, prefix string, n, rows int) {
	t.Helper()
	ctx := context.Background()
	const dim = 16
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vl := b.Field(1).(*array.FixedSizeListBuilder)
	fv := vl.ValueBuilder().(*array.Float32Builder)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		vl.Append(true)
		for j := range dim {
			fv.Append(float32((i*7919+j*104729)%1000) / 1000)
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	_, err := nsp.CreateNamespace(ctx, ident.ID{"ns"}, nil, "create")
	assert.NilError(t, err)
	for i := range n {
		_, _, err := nsp.CreateTable(ctx, ident.ID{"ns", fmt.Sprintf("%s%d", prefix, i)}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		assert.NilError(t, err)
	}
}

// runIndexScript runs scripts/index/<name> with the SDK in dir against the server at url (args
// follow), within timeout, and asserts it succeeded and reported its steps; the script checks the
// values.
func runIndexScript(t *testing.T, ctx context.Context, timeout time.Duration, name, dir, url string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sc := filepath.Join(filepath.Dir(script(t, "")), "index", name)
	cmd := testenv.NodeCmd(ctx, sc, append([]string{dir, url}, args...)...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	assert.NilError(t, err, "SDK script %s failed", name)
	assert.Assert(t, strings.Contains(string(out), `"steps"`))
}
