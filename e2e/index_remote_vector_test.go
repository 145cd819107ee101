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

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestSDKRemoteHNSWIndices: the official SDK in remote mode builds IVF_HNSW_SQ through lancecat
// (Index.hnswSq: issue 34 found it refused), sees it listed and described with its kind, and
// finds the exact row first through it (nprobes, ef); Index.hnswPq is refused by the remote
// client itself (no request is sent); Index.ivfRq is refused by lancecat with a 406 naming IVF_RQ. For every SDK version given;
// scripts/index/sdk-remote-vector.mjs checks the values.
func TestSDKRemoteHNSWIndices(t *testing.T) {
	dirs := testenv.SDKs(t)
	ctx := context.Background()
	cfg, ns := seededRoot(t)
	const rows, dim = 600, 16
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
	_, err := ns.CreateNamespace(ctx, ident.ID{"ns"}, nil, "create")
	assert.NilError(t, err)
	for i := range dirs {
		_, _, err := ns.CreateTable(ctx, ident.ID{"ns", fmt.Sprintf("hnsw%d", i)}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		assert.NilError(t, err)
	}
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			script := filepath.Join(filepath.Dir(script(t, "")), "index", "sdk-remote-vector.mjs")
			cmd := testenv.NodeCmd(ctx, script, dir, url, fmt.Sprintf("ns$hnsw%d", i), fmt.Sprint(rows))
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			assert.NilError(t, err, "SDK remote HNSW index script failed")
			assert.Assert(t, strings.Contains(string(out), `"steps"`))
		})
	}
}
