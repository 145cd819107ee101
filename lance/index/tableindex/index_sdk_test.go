package tableindex_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// Scalar index interop with the official SDK (both pinned versions), through
// scripts/index/sdk-index.mjs: indices lancecat builds are listed, described
// and used by the SDK (its plan shows ScalarIndexQuery on them) with the
// answers of a plain scan; indices the SDK builds are listed and searched by
// lancecat with the SDK's own answers.

type sdkIndexCheck struct {
	Indices []struct {
		Name      string   `json:"name"`
		IndexType string   `json:"indexType"`
		Columns   []string `json:"columns"`
	} `json:"indices"`
	Stats map[string]struct {
		NumIndexedRows   int    `json:"numIndexedRows"`
		NumUnindexedRows int    `json:"numUnindexedRows"`
		IndexType        string `json:"indexType"`
		NumIndices       int    `json:"numIndices"`
	} `json:"stats"`
	Queries []struct {
		Filter string  `json:"filter"`
		IDs    []int64 `json:"ids"`
		Plan   string  `json:"plan"`
	} `json:"queries"`
	AfterDrop []struct {
		Name string `json:"name"`
	} `json:"after_drop"`
}

// sdkIndex runs sdk-index.mjs mode with job and decodes its output into out.
func sdkIndex(t *testing.T, sdk, mode string, job map[string]any, out any) {
	t.Helper()
	testenv.NodeJSON(t, out, testenv.Script("index", "sdk-index.mjs"), mode, sdk, testenv.JobFile(t, job))
}

// indexFilters are the filters both tests ask, with the index each one
// should be served by.
var indexFilters = []struct{ filter, index string }{
	{"id = 7", "id_idx"},
	{"id > 90 AND id <= 212", "id_idx"},
	{"id IN (1, 5, 77, 299)", "id_idx"},
	{"cat = 'red'", "cat_idx"},
	{"cat IS NULL", "cat_idx"},
	{"cat IN ('blue', 'cyan')", "cat_idx"},
	{"x < 3.0", "x_idx"},
	{"x IS NULL", "x_idx"},
	{"x >= 50.25", "x_idx"},
	{"array_has_any(tags, ['buzz'])", "tags_idx"},
	{"array_has_all(tags, ['fizz', 'even'])", "tags_idx"},
}

func filterList() []string {
	var out []string
	for _, f := range indexFilters {
		out = append(out, f.filter)
	}
	return out
}

func TestSDKUsesGoScalarIndices(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			work := t.TempDir()
			ref := filepath.Join(work, "ref.lance")
			dir := filepath.Join(work, "t.lance")
			// The answers of a plain scan: 300 rows, and 350 after the append.
			sdkIndex(t, sdk, "create", map[string]any{"dir": ref, "rows": 350, "fragments": 1}, nil)
			var want350 sdkIndexCheck
			sdkIndex(t, sdk, "check", map[string]any{"dir": ref, "filters": filterList()}, &want350)
			sdkIndex(t, sdk, "create", map[string]any{"dir": dir, "rows": 300, "fragments": 3}, nil)
			var want300 sdkIndexCheck
			sdkIndex(t, sdk, "check", map[string]any{"dir": dir, "filters": filterList()}, &want300)

			ds := lancetest.Open(t, dir)
			for _, o := range []tableindex.ScalarIndexOptions{
				{Column: "id", Type: index.BTree},
				{Column: "cat", Type: index.Bitmap},
				{Column: "tags", Type: index.LabelList},
				{Column: "x", Type: index.BTree},
			} {
				_, err := tableindex.CreateScalarIndex(ctx, ds, o)
				assert.NilError(t, err)
			}

			check := func(want sdkIndexCheck, indexed, unindexed int) {
				t.Helper()
				var got sdkIndexCheck
				sdkIndex(t, sdk, "check", map[string]any{"dir": dir, "filters": filterList()}, &got)
				types := map[string]string{}
				for _, ix := range got.Indices {
					types[ix.Name] = strings.Join(ix.Columns, ",")
				}
				assert.Check(t, is.DeepEqual(types, map[string]string{"id_idx": "id", "cat_idx": "cat", "tags_idx": "tags", "x_idx": "x"}))
				for name, typ := range map[string]string{"id_idx": "BTREE", "cat_idx": "BITMAP", "tags_idx": "LABEL_LIST", "x_idx": "BTREE"} {
					st := got.Stats[name]
					assert.Check(t, is.Equal(st.IndexType, typ), name)
					assert.Check(t, is.Equal(st.NumIndexedRows, indexed), name)
					assert.Check(t, is.Equal(st.NumUnindexedRows, unindexed), name)
					assert.Check(t, is.Equal(st.NumIndices, 1), name)
				}
				for i, q := range got.Queries {
					assert.Check(t, is.DeepEqual(q.IDs, want.Queries[i].IDs), q.Filter)
					assert.Check(t, strings.Contains(q.Plan, "ScalarIndexQuery") && strings.Contains(q.Plan, "@"+indexFilters[i].index),
						"%s: the SDK did not use %s:\n%s", q.Filter, indexFilters[i].index, q.Plan)
				}
			}
			check(want300, 300, 0)
			// Rows the SDK appends after the index are searched flat and merged.
			sdkIndex(t, sdk, "append", map[string]any{"dir": dir, "from": 300, "to": 350}, nil)
			check(want350, 300, 50)

			// A drop by lancecat is seen by the SDK.
			_, err := tableindex.DropIndex(ctx, ds, "cat_idx")
			assert.NilError(t, err)
			var after sdkIndexCheck
			sdkIndex(t, sdk, "check", map[string]any{"dir": dir}, &after)
			var names []string
			for _, ix := range after.Indices {
				names = append(names, ix.Name)
			}
			slices.Sort(names)
			assert.Check(t, is.DeepEqual(names, []string{"id_idx", "tags_idx", "x_idx"}))
		})
	}
}

func TestGoReadsSDKScalarIndices(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t.lance")
			sdkIndex(t, sdk, "create", map[string]any{"dir": dir, "rows": 300, "fragments": 3, "indices": []map[string]string{
				{"column": "id", "type": "BTREE", "name": "id_idx"},
				{"column": "cat", "type": "BITMAP", "name": "cat_idx"},
				{"column": "tags", "type": "LABEL_LIST", "name": "tags_idx"},
				{"column": "x", "type": "BTREE", "name": "x_idx"},
			}}, nil)
			var want sdkIndexCheck
			sdkIndex(t, sdk, "check", map[string]any{"dir": dir, "filters": filterList()}, &want)

			ds := lancetest.Open(t, dir)
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			listed := map[string]string{}
			for _, info := range lance.ListIndices(v) {
				st, err := tableindex.IndexStats(v, info.Name)
				assert.NilError(t, err)
				assert.Check(t, is.DeepEqual(st, lance.IndexStats{Type: st.Type, NumIndexedRows: 300, NumIndices: 1}))
				listed[info.Name] = st.Type + ":" + strings.Join(info.Columns, ",")
			}
			assert.Check(t, is.DeepEqual(listed, map[string]string{
				"id_idx": "BTREE:id", "cat_idx": "BITMAP:cat", "tags_idx": "LABEL_LIST:tags", "x_idx": "BTREE:x",
			}))

			// row id -> id, to compare the index's rows with the SDK's answers.
			sc, err := ds.Scan(ctx, lance.ScanOptions{Columns: []string{"id"}, WithRowID: true})
			assert.NilError(t, err)
			idOf := map[uint64]int64{}
			for sc.Next() {
				rec := sc.RecordBatch()
				for i := range int(rec.NumRows()) {
					idOf[rec.Column(1).(*array.Uint64).Value(i)] = rec.Column(0).(*array.Int64).Value(i)
				}
			}
			assert.NilError(t, sc.Err())
			sc.Release()

			preds := []index.Predicate{
				{Op: index.Equals, Values: []any{int64(7)}},
				{Op: index.Range, Lower: &index.Bound{Value: int64(90)}, Upper: &index.Bound{Value: int64(212), Inclusive: true}},
				{Op: index.IsIn, Values: []any{int64(1), int64(5), int64(77), int64(299)}},
				{Op: index.Equals, Values: []any{"red"}},
				{Op: index.IsNull},
				{Op: index.IsIn, Values: []any{"blue", "cyan"}},
				{Op: index.Range, Upper: &index.Bound{Value: 3.0}},
				{Op: index.IsNull},
				{Op: index.Range, Lower: &index.Bound{Value: 50.25, Inclusive: true}},
				{Op: index.HasAny, Values: []any{"buzz"}},
				{Op: index.HasAll, Values: []any{"fizz", "even"}},
			}
			for i, f := range indexFilters {
				var ids []int64
				for _, rowID := range searchAll(t, ds, f.index, preds[i]) {
					ids = append(ids, idOf[rowID])
				}
				slices.Sort(ids)
				if ids == nil {
					ids = []int64{}
				}
				assert.Check(t, is.DeepEqual(ids, want.Queries[i].IDs), f.filter)
			}
			// The label list's null rows (global buffer lance:label_list_nulls):
			// the script's tags are null when id % 13 == 6.
			var nullIDs, wantNull []int64
			for _, rowID := range searchAll(t, ds, "tags_idx", index.Predicate{Op: index.IsNull}) {
				nullIDs = append(nullIDs, idOf[rowID])
			}
			slices.Sort(nullIDs)
			for id := int64(6); id < 300; id += 13 {
				wantNull = append(wantNull, id)
			}
			assert.Check(t, is.DeepEqual(nullIDs, wantNull), "tags IS NULL")
		})
	}
}

// TestScalarIndicesInteropOnS3: both directions again with the table on
// MinIO (scripts/with-services.sh): the SDK builds the BITMAP, lancecat the
// BTREE and the LABEL_LIST through the S3 backend; the SDK uses all three
// with a plain scan's answers, and lancecat's reader answers the SDK's
// BITMAP as the SDK does.
func TestScalarIndicesInteropOnS3(t *testing.T) {
	sdks := testenv.SDKs(t)
	root := lancetest.NewS3Root(t)
	opts := root.Options
	for _, sdk := range sdks {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			ds, uri := root.Open(t, filepath.Base(sdk)+"/t.lance")
			ref := root.URI(filepath.Base(sdk) + "/ref.lance")
			job := func(dir string, extra map[string]any) map[string]any {
				m := map[string]any{"dir": dir, "storage_options": opts, "filters": filterList()}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			sdkIndex(t, sdk, "create", job(ref, map[string]any{"rows": 300, "fragments": 1}), nil)
			var want sdkIndexCheck
			sdkIndex(t, sdk, "check", job(ref, nil), &want)
			sdkIndex(t, sdk, "create", job(uri, map[string]any{"rows": 300, "fragments": 3, "indices": []map[string]string{
				{"column": "cat", "type": "BITMAP", "name": "cat_idx"},
			}}), nil)

			for _, o := range []tableindex.ScalarIndexOptions{
				{Column: "id", Type: index.BTree},
				{Column: "x", Type: index.BTree},
				{Column: "tags", Type: index.LabelList},
			} {
				_, err := tableindex.CreateScalarIndex(ctx, ds, o)
				assert.NilError(t, err)
			}
			var got sdkIndexCheck
			sdkIndex(t, sdk, "check", job(uri, nil), &got)
			for i, q := range got.Queries {
				assert.Check(t, is.DeepEqual(q.IDs, want.Queries[i].IDs), q.Filter)
				assert.Check(t, strings.Contains(q.Plan, "@"+indexFilters[i].index), "%s:\n%s", q.Filter, q.Plan)
			}
			// lancecat reads the SDK's BITMAP on S3.
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			segs, err := tableindex.IndexSegments(v, "cat_idx")
			assert.NilError(t, err)
			r, err := tableindex.OpenScalarIndex(ctx, ds, v, segs[0])
			assert.NilError(t, err)
			rows, err := r.Search(ctx, index.Predicate{Op: index.IsNull})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(rows.GetCardinality(), uint64(len(want.Queries[4].IDs))), "cat IS NULL")
		})
	}
}
