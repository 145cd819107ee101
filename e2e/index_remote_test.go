package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// TestSDKRemoteScalarIndices: the official SDK in remote mode (db:// with hostOverride) creates
// BTREE and BITMAP indices through create_index (default name <column>_idx), lists them with
// their types and columns, reads their stats, drops one (a second drop is "not found") and is
// refused a vector index with a message naming the follow-up: for every SDK version given.
// scripts/index/sdk-remote-index.mjs checks the values.
func TestSDKRemoteScalarIndices(t *testing.T) {
	dirs := sdkDirs(t)
	ctx := context.Background()
	cfg := server.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = filepath.Join(t.TempDir(), "root")
	assert.NilError(t, os.MkdirAll(cfg.Root, 0o755))
	fs, err := storage.NewFS(cfg.Root)
	assert.NilError(t, err)
	ns := namespace.New(fs, namespace.Options{RootURI: cfg.Root})
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
		_, _, err := ns.CreateTable(ctx, ident.ID{fmt.Sprintf("nums%d", i)}, namespace.NewTable{Schema: schema, Records: []arrow.RecordBatch{rec}})
		assert.NilError(t, err)
	}
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			script := filepath.Join(filepath.Dir(script(t, "")), "index", "sdk-remote-index.mjs")
			cmd := exec.CommandContext(ctx, "node", script, dir, url, fmt.Sprintf("nums%d", i))
			cmd.Env = append(os.Environ(), "RUST_LOG=error", "LANCEDB_LOG=error")
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			assert.NilError(t, err, "SDK remote index script failed")
			assert.Assert(t, strings.Contains(string(out), `"steps"`))
		})
	}
}
