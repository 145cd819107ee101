package app

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestShutdownEndsIndexBuilds: a background index build asked for just before the server shuts
// down has ended by the time Run returns: its task is not left running (it either committed, or
// was cancelled and says the replica shut down) and its claim is gone, so no other replica waits
// StaleAfter for the name. (Whether the build finished first is a race this test accepts either
// way; namespace's TestCancelIndexBuilds holds a build mid-way to check the cancel itself.)
func TestShutdownEndsIndexBuilds(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "data")
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	id := ident.ID{"vecs"}
	{
		// The table is written straight into the root before the server starts.
		schema := arrow.NewSchema([]arrow.Field{{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32)}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		vl := b.Field(0).(*array.FixedSizeListBuilder)
		fv := vl.ValueBuilder().(*array.Float32Builder)
		rng := rand.New(rand.NewPCG(3, 4))
		for range 5000 {
			vl.Append(true)
			for range 8 {
				fv.Append(rng.Float32())
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		_, _, err := namespace.New(fs, namespace.Options{}).CreateTable(ctx, id, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		rec.Release()
		assert.NilError(t, err)
	}

	cfg := DefaultConfig()
	cfg.Root = root
	cfg.Listen = "127.0.0.1:0"
	cfg.IndexBuild.BackgroundRows = 100
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, cfg, nil, ready) }()
	addr := <-ready
	resp, err := http.Post("http://"+addr.String()+"/v1/table/vecs/create_index", "application/json",
		bytes.NewReader([]byte(`{"column":"vec","index_type":"IVF_PQ","num_partitions":4,"num_sub_vectors":2}`)))
	assert.NilError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 200, string(body))
	cancel()
	assert.NilError(t, <-done)

	n := namespace.New(fs, namespace.Options{})
	h, err := n.LoadTable(ctx, id)
	assert.NilError(t, err)
	store := mustDataset(t, h).Store()
	recs, err := (&tasks.Log{Store: store}).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Assert(t, recs[0].State != tasks.StateRunning, "%+v", recs[0])
	t.Logf("the build ended %s %s", recs[0].State, recs[0].Error)
	if recs[0].State == tasks.StateFailed {
		assert.ErrorContains(t, errorString(recs[0].Error), "shutting down")
	}
	claims, err := storage.ListAll(ctx, store, "_maintenance/index_builds/")
	assert.NilError(t, err)
	assert.Equal(t, len(claims), 0, "the claim is released")
}

type errorString string

func (e errorString) Error() string { return string(e) }
