package query_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// diffQuery is one query of testdata/queries.json (the oracle's format).
type diffQuery struct {
	Name      string          `json:"name"`
	Filter    string          `json:"filter"`
	Select    json.RawMessage `json:"select"`
	Limit     int64           `json:"limit"`
	Offset    int64           `json:"offset"`
	Vector    json.RawMessage `json:"vector"`
	Column    string          `json:"column"`
	Metric    string          `json:"metric"`
	K         int             `json:"k"`
	Prefilter *bool           `json:"prefilter"`
	Lower     *float32        `json:"lower"`
	Upper     *float32        `json:"upper"`
	WithRowID bool            `json:"withRowId"`
	// SDKFails marks a query the SDK refuses and we answer, saying why (a deliberate difference).
	SDKFails string `json:"sdkFails"`
	OrderBy  []struct {
		Column     string `json:"column"`
		Ascending  bool   `json:"ascending"`
		NullsFirst bool   `json:"nullsFirst"`
	} `json:"orderBy"`
}

type diffResult struct {
	Name       string    `json:"name"`
	Columns    []string  `json:"columns"`
	IDs        []int64   `json:"ids"`
	Distances  []float64 `json:"distances"`
	QueryIndex []int32   `json:"query_index"`
	RowIDs     []uint64  `json:"rowids"`
	Error      string    `json:"error"`
	Skip       string    `json:"skip"`
}

// request builds the query.Request the remote client would send for q.
func (q diffQuery) request(t *testing.T) query.Request {
	req := query.Request{Filter: q.Filter, Limit: q.Limit, Offset: q.Offset, WithRowID: q.WithRowID, Prefilter: true}
	for _, o := range q.OrderBy {
		req.OrderBy = append(req.OrderBy, query.OrderBy{Column: o.Column, Descending: !o.Ascending, NullsFirst: o.NullsFirst})
	}
	if len(q.Select) > 0 {
		if q.Select[0] == '[' {
			assert.NilError(t, json.Unmarshal(q.Select, &req.Columns))
		} else {
			// an alias map, in the order written
			dec := json.NewDecoder(strings.NewReader(string(q.Select)))
			_, err := dec.Token()
			assert.NilError(t, err)
			for dec.More() {
				k, err := dec.Token()
				assert.NilError(t, err)
				var v string
				assert.NilError(t, dec.Decode(&v))
				req.Projection = append(req.Projection, query.Projection{Name: k.(string), Expr: v})
			}
		}
	}
	if len(q.Vector) > 0 {
		vq := &query.VectorQuery{Column: q.Column, Metric: q.Metric, K: q.K, LowerBound: q.Lower, UpperBound: q.Upper}
		var many [][]float32
		if json.Unmarshal(q.Vector, &many) != nil {
			var one []float32
			assert.NilError(t, json.Unmarshal(q.Vector, &one))
			many = [][]float32{one}
		}
		vq.Vectors = many
		req.Vector = vq
		req.Limit = 0
		if q.Prefilter != nil {
			req.Prefilter = *q.Prefilter
		}
	}
	return req
}

// TestDifferentialSDK runs every query of testdata/queries.json with the official LanceDB SDK
// (scripts/query/oracle.mjs, embedded) and with this package over the very same dataset the SDK
// wrote (two fragments and a deletion), and requires the same rows in the same order, the same
// _distance within 1e-4 relative, the same query_index and _rowid, or an error from both. Every
// installed SDK version (0.31.0 and 0.39.0) is checked.
func TestDifferentialSDK(t *testing.T) {
	sdks := testenv.SDKs(t)
	corpus, err := filepath.Abs("testdata/queries.json")
	assert.NilError(t, err)
	script := testenv.Script("query", "oracle.mjs")
	raw, err := os.ReadFile(corpus)
	assert.NilError(t, err)
	var queries []diffQuery
	assert.NilError(t, json.Unmarshal(raw, &queries))
	for _, sdk := range sdks {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			work := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out := testenv.Run(t, testenv.NodeCmd(ctx, script, sdk, work, corpus))
			var got struct {
				SDK     string       `json:"sdk"`
				Results []diffResult `json:"results"`
			}
			assert.NilError(t, json.Unmarshal(out, &got))
			assert.Equal(t, len(got.Results), len(queries))
			fs, err := storage.NewFS(filepath.Join(work, "db", "t.lance"))
			assert.NilError(t, err)
			ds := lance.NewDataset(fs)
			for i, q := range queries {
				t.Run(q.Name, func(t *testing.T) {
					compareSDK(t, ds, q, got.Results[i])
				})
			}
		})
	}
}

func compareSDK(t *testing.T, ds *lance.Dataset, q diffQuery, want diffResult) {
	if want.Skip != "" {
		t.Skip(want.Skip)
	}
	mem := testenv.CheckedAllocator(t)
	req := q.request(t)
	req.Mem = mem
	rr, err := query.Run(context.Background(), ds, req)
	if q.SDKFails != "" {
		assert.Assert(t, want.Error != "", "marked as refused by the SDK (%s), but the SDK answers", q.SDKFails)
		assert.NilError(t, err)
		rr.Release()
		return
	}
	if want.Error != "" {
		assert.Assert(t, err != nil, "the SDK fails (%s), we answer", want.Error)
		return
	}
	assert.NilError(t, err)
	rec := collect(t, rr)
	defer rec.Release()
	if want.QueryIndex != nil {
		// The SDK runs the query vectors concurrently and may answer their groups in any order
		// (seen with 0.31.0): compare group by group, in query_index order.
		perm := make([]int, len(want.QueryIndex))
		for i := range perm {
			perm[i] = i
		}
		slices.SortStableFunc(perm, func(a, b int) int { return int(want.QueryIndex[a]) - int(want.QueryIndex[b]) })
		want.IDs = permute(want.IDs, perm)
		want.Distances = permute(want.Distances, perm)
		want.QueryIndex = permute(want.QueryIndex, perm)
		want.RowIDs = permute(want.RowIDs, perm)
	}
	if len(want.IDs) > 0 {
		// (the SDK answers a query matching nothing with an empty schema)
		assert.DeepEqual(t, fieldNames(rec), want.Columns)
	}
	assert.DeepEqual(t, nonNil(int64s(rec, "id")), nonNil(want.IDs))
	if want.Distances != nil {
		got := float32s(rec, query.DistanceColumn)
		assert.Equal(t, len(got), len(want.Distances))
		for i, d := range want.Distances {
			assert.Check(t, math.Abs(float64(got[i])-d) <= 1e-4*math.Max(1e-3, math.Abs(d)), "row %d: _distance %v, the SDK %v", i, got[i], d)
		}
	}
	if want.QueryIndex != nil {
		qi := rec.Column(rec.Schema().FieldIndices(query.QueryIndexColumn)[0]).(*array.Int32)
		assert.DeepEqual(t, slices.Clone(qi.Int32Values()), want.QueryIndex)
	}
	if want.RowIDs != nil {
		ri := rec.Column(rec.Schema().FieldIndices(query.RowIDColumn)[0]).(*array.Uint64)
		assert.DeepEqual(t, slices.Clone(ri.Uint64Values()), want.RowIDs)
	}
}

func permute[T any](v []T, perm []int) []T {
	if v == nil {
		return nil
	}
	out := make([]T, len(perm))
	for i, p := range perm {
		out[i] = v[p]
	}
	return out
}
