package maintenance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
)

// TestCompactWithFourSDKWriters (issue 17 acceptance, concurrency): four SDK processes append
// and delete on one table while lancecat compacts it over and over. No writer sees an error
// (Lance rebases an append over a Rewrite, and a Rewrite that lost a fragment to a delete is
// ours to plan again, not the writer's), and the table holds exactly the rows the writers
// committed: every append there, every deleted row gone.
func TestCompactWithFourSDKWriters(t *testing.T) {
	newest := testenv.NewestSDK(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "db")
	runSDK(t, newest, db, "create", map[string]any{})
	// Small fragments to compact from the start.
	var seed []map[string]any
	for i := range 6 {
		seed = append(seed, map[string]any{"op": "gen", "from": 10 + 4*i, "n": 4})
	}
	runSDK(t, newest, db, "ops", seed)
	ds := openDir(t, filepath.Join(db, "t.lance"))

	const writers, batches, rows = 4, 6, 5
	var wg sync.WaitGroup
	errs := make([]error, writers)
	var running atomic.Int32
	running.Store(writers)
	for w := range writers {
		var ops []map[string]any
		for b := range batches {
			from := 100000*(w+1) + b*rows
			ops = append(ops, map[string]any{"op": "gen", "from": from, "n": rows},
				map[string]any{"op": "delete", "where": fmt.Sprintf("id = %d", from)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			arg, _ := json.Marshal(ops)
			cmd := testenv.NodeCmd(ctx, testenv.Script("maintenance", "sdk.mjs"), newest, db, "t", "ops", string(arg))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[w] = fmt.Errorf("writer %d: %v\n%s", w, err, stderr.String())
			}
		}()
	}
	compactions, attempts := 0, 0
	for running.Load() > 0 {
		rep, err := Compact(ctx, ds, CompactOptions{})
		if err != nil {
			t.Logf("compaction gave up this round (the writers keep going): %v", err)
		} else if rep.Version != 0 {
			compactions++
			attempts += rep.Attempts
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for _, err := range errs {
		assert.NilError(t, err)
	}
	t.Logf("%d compactions committed while the writers ran (%d attempts)", compactions, attempts)
	_, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	got := sdkRead(t, newest, db)
	assert.Equal(t, got.Count, 10+6*4+writers*batches*(rows-1))
	ours := map[int64]bool{}
	sc, err := ds.Scan(ctx, lance.ScanOptions{Columns: []string{"id"}})
	assert.NilError(t, err)
	for sc.Next() {
		ids := sc.RecordBatch().Column(0).(*array.Int64)
		for i := range ids.Len() {
			ours[ids.Value(i)] = true
		}
	}
	assert.NilError(t, sc.Err())
	sc.Release()
	assert.Equal(t, len(ours), got.Count)
	for w := range writers {
		for b := range batches {
			from := int64(100000*(w+1) + b*rows)
			for id := from; id < from+rows; id++ {
				assert.Equal(t, ours[id], id != from, "row %d", id)
			}
		}
	}
}
