package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
	const rows = 600
	seedVectorTables(t, ns, "hnsw", len(dirs), rows)
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runIndexScript(t, ctx, 3*time.Minute, "sdk-remote-vector.mjs", dir, url, fmt.Sprintf("ns$hnsw%d", i), fmt.Sprint(rows))
		})
	}
}
