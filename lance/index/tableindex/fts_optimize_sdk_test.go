package tableindex_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// TestFTSOptimizeSDK: rows appended after the SDK built its INVERTED index
// (both SDKs, with positions) are added to it by lancecat's
// optimize_indices: one segment covering every fragment afterwards, with
// the partitions the SDK's own optimize() leaves ([0 1]), which the SDK
// lists and uses (explainPlan) with the answers (rows and BM25 scores) of
// its own optimize() of the same table (0.39.0; 0.31.0 tokenizes new
// documents slightly differently), and lancecat's reader answers as the
// SDK does on it.
func TestFTSOptimizeSDK(t *testing.T) {
	docs := ftsCorpus(2000, 13)
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t.lance")
			sdkFTS(t, sdk, "create", map[string]any{"dir": dir, "docs": docs[:1500], "index": true, "with_position": true}, nil)
			sdkFTS(t, sdk, "append", map[string]any{"dir": dir, "docs": docs[1500:]}, nil)
			ref := sdkOptimizedCopy(t, sdk, dir)

			ds := lancetest.Open(t, dir)
			rep, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{})
			assert.NilError(t, err)
			assert.Equal(t, len(rep.Indices), 1)
			assert.Equal(t, rep.Indices[0].Status, tableindex.IndexOptimized, "%+v", rep.Indices[0])
			assert.Equal(t, rep.Indices[0].SegmentsAfter, 1)
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			_, segs, err := tableindex.FTSIndexFor(v, "text")
			assert.NilError(t, err)
			un, err := tableindex.UnindexedFragments(v, segs)
			assert.NilError(t, err)
			assert.Equal(t, len(un), 0)
			for _, d := range []string{dir, ref} {
				dd := lancetest.Open(t, d)
				vv, err := dd.OpenLatest(ctx)
				assert.NilError(t, err)
				_, ss, err := tableindex.FTSIndexFor(vv, "text")
				assert.NilError(t, err)
				for _, s := range ss {
					parts, ts, err := index.FTSLayout(ctx, index.BucketStore(dd.Store(), lance.IndexDir(s)))
					assert.NilError(t, err)
					t.Logf("%s: segment %s index_version %d partitions %v token set %s", filepath.Base(d), s.GetName(), s.GetIndexVersion(), parts, ts)
					assert.DeepEqual(t, parts, []uint64{0, 1})
				}
			}

			mine, want := sdkFTSSearch(t, sdk, dir, ftsRemapQueries), sdkFTSSearch(t, sdk, ref, ftsRemapQueries)
			ours := goFTSByID(t, ds, ftsRemapQueries)
			for i, q := range ftsRemapQueries {
				what := fmt.Sprint(filepath.Base(sdk), " ", q)
				checkFTSPlan(t, what, mine[i])
				if !strings.HasSuffix(sdk, "0.39.0") {
					// 0.31.0's Lance answers a little differently on an
					// index of several partitions (measured: "fox" ranks 8-9
					// differ by 0.004-0.006 from lancecat's reader, and from
					// its own optimize(); ranks 0-7 and the other queries
					// agree), as its scores differ for an index lancecat
					// builds (TestSDKUsesGoFTSIndex): logged, not compared
					t.Logf("%s: SDK after lancecat's optimize %v %v; after its own %v %v; lancecat %v %v", what,
						mine[i].IDs, mine[i].Scores, want[i].IDs, want[i].Scores, ours[i].IDs, ours[i].Scores)
					continue
				}
				checkFTSAnswers(t, "lancecat after its optimize vs SDK after it "+what, ours[i], mine[i])
				checkFTSAnswers(t, "SDK after lancecat's optimize vs after its own "+what, mine[i], want[i])
			}
		})
	}
}
