package maintenance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
)

type sdkAt struct {
	Count  int    `json:"count"`
	Digest string `json:"digest"`
}

func sdkReadAt(t *testing.T, sdk, db string, at map[string]any) sdkAt {
	t.Helper()
	var v sdkAt
	assert.NilError(t, json.Unmarshal(runSDK(t, sdk, db, "readat", at), &v))
	return v
}

func sdkVersions(t *testing.T, sdk, db string) []uint64 {
	t.Helper()
	var v []uint64
	assert.NilError(t, json.Unmarshal(runSDK(t, sdk, db, "versions", nil), &v))
	return v
}

func intp(v int) *int { return &v }

// TestCleanupSDK: a table the SDK made (appends, deletes, a tag on an old version) cleaned by the
// policy (retain 3 versions, retention past): versions beyond the 3 newest go, the tagged one
// stays, and the SDK still reads every kept version and the tag with the rows it read before.
func TestCleanupSDK(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(testenv.SDKVersion(sdk), func(t *testing.T) {
			ctx := context.Background()
			db := t.TempDir()
			runSDK(t, sdk, db, "create", map[string]any{})
			var ops []map[string]any
			for i := range 6 {
				ops = append(ops, map[string]any{"op": "gen", "from": 10 + i*5, "n": 5})
			}
			ops = append(ops, map[string]any{"op": "delete", "where": "id % 3 = 0"})
			runSDK(t, sdk, db, "ops", ops)
			runSDK(t, sdk, db, "tag", map[string]any{"name": "kept", "version": 4})
			all := sdkVersions(t, sdk, db)
			latest := all[len(all)-1]
			want := []uint64{4, latest - 2, latest - 1, latest}
			before := map[uint64]sdkAt{}
			for _, v := range want {
				before[v] = sdkReadAt(t, sdk, db, map[string]any{"version": v})
			}
			ds := openDir(t, filepath.Join(db, "t.lance"))
			rep, err := Run(ctx, ds, RunOptions{
				Steps:  []string{StepCleanup},
				Policy: registry.PolicySettings{RetentionDays: intp(1), RetainVersions: intp(3)},
				Now:    time.Now().Add(48 * time.Hour),
			})
			assert.NilError(t, err)
			step := rep.Step(StepCleanup)
			assert.Equal(t, step.Status, StatusDone, step.Reason)
			assert.Equal(t, step.VersionsRemoved, len(all)-len(want))
			got := sdkVersions(t, sdk, db)
			assert.DeepEqual(t, got, want)
			for _, v := range got {
				assert.DeepEqual(t, sdkReadAt(t, sdk, db, map[string]any{"version": v}), before[v])
			}
			assert.DeepEqual(t, sdkReadAt(t, sdk, db, map[string]any{"tag": "kept"}), before[4])
			assert.Equal(t, sdkRead(t, sdk, db).Digest != "", true)
		})
	}
}

// TestCleanupRacingSDKWriter: the SDK appends while cleanup runs over and over with the most
// aggressive age (every old version): the writer's files are unreferenced until it commits, and
// the unverified age keeps them; every appended row is there at the end.
func TestCleanupRacingSDKWriter(t *testing.T) {
	sdk := testenv.SDKs(t)[len(testenv.SDKs(t))-1]
	ctx := context.Background()
	db := t.TempDir()
	runSDK(t, sdk, db, "create", map[string]any{})
	ds := openDir(t, filepath.Join(db, "t.lance"))
	const appends, n = 10, 4
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		var ops []map[string]any
		for i := range appends {
			ops = append(ops, map[string]any{"op": "gen", "from": 100 + i*n, "n": n})
		}
		runSDK(t, sdk, db, "ops", ops)
	}()
	zero := time.Duration(0)
	runs := 0
	for loop := true; loop; runs++ {
		select {
		case <-done:
			loop = false
		default:
		}
		_, err := Run(ctx, ds, RunOptions{Steps: []string{StepCleanup}, OlderThan: &zero})
		assert.NilError(t, err)
	}
	wg.Wait()
	got := sdkRead(t, sdk, db)
	assert.Equal(t, got.Count, 10+appends*n, "after %d cleanups", runs)
	vs := sdkVersions(t, sdk, db)
	assert.Assert(t, slices.Contains(vs, uint64(1+appends)))
}
