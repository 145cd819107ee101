package wire

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/query"
)

// TestMergeInsertOnFromBody: the JSON MergeInsertIntoTableRequest carries `on` as an array since
// 9a92264 and as one string before it.
func TestMergeInsertOnFromBody(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
		bad  bool
	}{
		{"array", `{"on":["a","b"],"when_matched_update_all":true}`, []string{"a", "b"}, false},
		{"one-element array", `{"on":["id"]}`, []string{"id"}, false},
		{"single string, as before 9a92264", `{"on":"id"}`, []string{"id"}, false},
		{"duplicates count once", `{"on":["a","a"]}`, []string{"a"}, false},
		{"missing", `{}`, nil, true},
		{"null", `{"on":null}`, nil, true},
		{"empty array (minItems 1)", `{"on":[]}`, nil, true},
		{"empty string (minLength 1)", `{"on":""}`, nil, true},
		{"empty element", `{"on":["a",""]}`, nil, true},
		{"not strings", `{"on":[1]}`, nil, true},
		{"an object", `{"on":{"a":1}}`, nil, true},
		{"not JSON", `{"on":`, nil, true},
		{"unknown field", `{"on":"id","when_matched_update_al":true}`, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeMergeInsertBody([]byte(tc.body))
			if tc.bad {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, *req.On, tc.want)
		})
	}
	// The other fields decode as the generated type says.
	req, err := DecodeMergeInsertBody([]byte(`{"on":"id","when_matched_update_all":true,"id":["ns","t"]}`))
	assert.NilError(t, err)
	assert.Equal(t, *req.WhenMatchedUpdateAll, true)
	assert.DeepEqual(t, *req.Id, []string{"ns", "t"})
}

// TestQueryOrderBy: order_by (spec 9a92264) decodes with its defaults (ascending, nulls last);
// null and nameless entries are refused, never ignored.
func TestQueryOrderBy(t *testing.T) {
	cases := []struct {
		name string
		body string
		path []string
		want []QueryOrdering
		bad  bool
	}{
		{"absent", `{"k":10}`, []string{"order_by"}, nil, false},
		{"empty body", ``, []string{"order_by"}, nil, false},
		{"empty list keeps the default ordering", `{"k":10,"order_by":[]}`, []string{"order_by"}, []QueryOrdering{}, false},
		{"defaults", `{"k":10,"order_by":[{"column_name":"a"}]}`, []string{"order_by"},
			[]QueryOrdering{{Column: "a", Ascending: true}}, false},
		{"explicit, in list order", `{"k":1,"order_by":[{"column_name":"s.x","ascending":false,"nulls_first":true},{"column_name":"b"}]}`,
			[]string{"order_by"}, []QueryOrdering{{Column: "s.x", NullsFirst: true}, {Column: "b", Ascending: true}}, false},
		{"null is not allowed", `{"k":10,"order_by":null}`, []string{"order_by"}, nil, true},
		{"no column_name", `{"k":10,"order_by":[{"ascending":true}]}`, []string{"order_by"}, nil, true},
		{"empty column_name", `{"k":10,"order_by":[{"column_name":""}]}`, []string{"order_by"}, nil, true},
		{"null entry", `{"k":10,"order_by":[null]}`, []string{"order_by"}, nil, true},
		{"not a list", `{"k":10,"order_by":{"column_name":"a"}}`, []string{"order_by"}, nil, true},
		{"wrong type", `{"k":10,"order_by":[{"column_name":"a","ascending":"yes"}]}`, []string{"order_by"}, nil, true},
		{"explain: inside query", `{"query":{"k":1,"order_by":[{"column_name":"a","ascending":false}]}}`, []string{"query", "order_by"},
			[]QueryOrdering{{Column: "a"}}, false},
		{"explain: null inside query", `{"query":{"k":1,"order_by":null}}`, []string{"query", "order_by"}, nil, true},
		{"explain: no query", `{}`, []string{"query", "order_by"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := orderingOf([]byte(tc.body), tc.path)
			if tc.bad {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// orderingOf decodes body as the door at path does (a query body, or explain_plan's with its
// query: order_by is kept raw in the one decode) and is the order_by it resolves to.
func orderingOf(body []byte, path []string) ([]QueryOrdering, error) {
	if len(path) == 2 {
		var e Explain
		if err := Decode(body, &e, ""); err != nil {
			return nil, err
		}
		return ordering(e.Query.OrderBy, "query.order_by")
	}
	var q Query
	if err := Decode(body, &q, ""); err != nil {
		return nil, err
	}
	return ordering(q.OrderBy, "order_by")
}

// TestQueryRequestShapes: both dialects of a query body decode to the same engine request: the
// spec's wrapped vector and columns, and a LanceDB remote client's bare vector (or vectors), bare
// column list or {alias: sql} map (in the client's order), k = i64::MAX for "every row", and index
// tuning fields a flat search ignores. What the engine cannot serve is refused, never ignored.
func TestQueryRequestShapes(t *testing.T) {
	f32 := func(x float32) *float32 { return &x }
	v3 := []float32{1, 2, 3}
	cases := []struct {
		name string
		body string
		want query.Request
		at   catalog.ReadAt
		code *nserr.Code // refused with this code
	}{
		{"remote plain scan, no limit", `{"k":9223372036854775807,"prefilter":true,"vector":[],"version":null}`,
			query.Request{}, catalog.ReadAt{}, nil},
		{"remote columns and filter", `{"columns":["id","name"],"filter":"id < 3","k":5,"offset":2,"vector":[],"version":4}`,
			query.Request{Columns: []string{"id", "name"}, Filter: "id < 3", Limit: 5, Offset: 2}, catalog.ReadAt{Version: ptr(int64(4))}, nil},
		{"remote alias map keeps its order", `{"columns":{"z":"id * 2","a":"upper(name)"},"k":2}`,
			query.Request{Projection: []query.Projection{{Name: "z", Expr: "id * 2"}, {Name: "a", Expr: "upper(name)"}}, Limit: 2}, catalog.ReadAt{}, nil},
		{"spec column_names", `{"columns":{"column_names":["a"]},"k":1}`, query.Request{Columns: []string{"a"}, Limit: 1}, catalog.ReadAt{}, nil},
		{"spec column_aliases", `{"columns":{"column_aliases":{"x":"a"}},"k":1}`,
			query.Request{Projection: []query.Projection{{Name: "x", Expr: "a"}}, Limit: 1}, catalog.ReadAt{}, nil},
		{"remote vector search with index fields", `{"vector":[1,2,3],"vector_column":"v","distance_type":"Cosine","k":10,"nprobes":20,
			"minimum_nprobes":20,"maximum_nprobes":0,"ef":null,"refine_factor":null,"lower_bound":null,"upper_bound":0.5,
			"bypass_vector_index":true,"prefilter":false,"with_row_id":true,"branch":"b"}`,
			query.Request{WithRowID: true, Vector: &query.VectorQuery{Column: "v", Vectors: [][]float32{v3}, Metric: "cosine", K: 10, UpperBound: f32(0.5),
				NProbes: 20, MaxNProbes: query.AllPartitions, BypassVectorIndex: true}},
			catalog.ReadAt{Branch: "b"}, nil},
		{"fast_search", `{"vector":[1,2,3],"k":10,"fast_search":true}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 10, FastSearch: true}}, catalog.ReadAt{}, nil},
		{"use_lsm (0.39 useLsm; no MemWAL here: the table is all an LSM read sees)", `{"k":9223372036854775807,"prefilter":true,"use_lsm":false,"vector":[],"version":null}`,
			query.Request{}, catalog.ReadAt{}, nil},
		{"use_lsm true", `{"k":3,"use_lsm":true,"vector":[]}`, query.Request{Limit: 3}, catalog.ReadAt{}, nil},
		{"legacy nprobes is exact", `{"vector":[1,2,3],"k":10,"nprobes":7}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 10, NProbes: 7}}, catalog.ReadAt{}, nil},
		{"minimum and maximum nprobes win over nprobes", `{"vector":[1,2,3],"k":10,"nprobes":7,"minimum_nprobes":4,"maximum_nprobes":9}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 10, NProbes: 4, MaxNProbes: 9}}, catalog.ReadAt{}, nil},
		{"minimum nprobes alone has no bound", `{"vector":[1,2,3],"k":10,"minimum_nprobes":4}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 10, NProbes: 4, MaxNProbes: query.AllPartitions}}, catalog.ReadAt{}, nil},
		{"maximum nprobes alone below the default minimum", `{"vector":[1,2,3],"k":10,"maximum_nprobes":5}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 10, NProbes: 5, MaxNProbes: 5}}, catalog.ReadAt{}, nil},
		{"minimum nprobes 0", `{"vector":[1,2,3],"k":10,"minimum_nprobes":0}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"maximum below minimum", `{"vector":[1,2,3],"k":10,"minimum_nprobes":8,"maximum_nprobes":3}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"negative maximum", `{"vector":[1,2,3],"k":10,"maximum_nprobes":-3}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"remote multivector", `{"vector":[[1,2,3],[1,2,3]],"k":3,"prefilter":true,"filter":"a > 1"}`,
			query.Request{Filter: "a > 1", Prefilter: true, Vector: &query.VectorQuery{Vectors: [][]float32{v3, v3}, K: 3}}, catalog.ReadAt{}, nil},
		{"spec single_vector, default k", `{"vector":{"single_vector":[1,2,3]},"k":0}`,
			query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: query.DefaultK}}, catalog.ReadAt{}, nil},
		{"spec multi_vector", `{"vector":{"multi_vector":[[1,2,3]]},"k":4,"offset":1}`,
			query.Request{Offset: 1, Vector: &query.VectorQuery{Vectors: [][]float32{v3}, K: 4}}, catalog.ReadAt{}, nil},
		{"order_by", `{"k":1,"order_by":[{"column_name":"a","ascending":false,"nulls_first":true}]}`,
			query.Request{Limit: 1, OrderBy: []query.OrderBy{{Column: "a", Descending: true, NullsFirst: true}}}, catalog.ReadAt{}, nil},
		{"remote full-text string query", `{"full_text_query":{"columns":[],"query":"odd"},"vector":[],"k":10}`,
			query.Request{Limit: 10, FullText: &query.FullTextQuery{Columns: []string{}, Root: query.FTSNode{Leaf: index.FTSQuery{Kind: index.Match, Terms: "odd"}}}}, catalog.ReadAt{}, nil},
		{"remote structured full-text query", `{"full_text_query":{"query":{"match":{"terms":"odd"}}},"k":10}`,
			query.Request{Limit: 10, FullText: &query.FullTextQuery{Root: query.FTSNode{Leaf: index.FTSQuery{Kind: index.Match, Terms: "odd"}}}}, catalog.ReadAt{}, nil},
		{"full-text query of no shape", `{"full_text_query":{"nope":1},"k":10}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"vector of strings", `{"vector":["a"],"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"empty query vector", `{"vector":[[1],[]],"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"both wrapped vectors", `{"vector":{"single_vector":[1],"multi_vector":[[1]]},"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"columns of numbers", `{"columns":[1],"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"columns both forms", `{"columns":{"column_names":["a"],"column_aliases":{"x":"a"}},"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"alias given twice", `{"columns":{"x":"a","x":"b"},"k":1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"negative k", `{"k":-1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"negative offset", `{"k":1,"offset":-1}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
		{"k too large for int64", `{"k":92233720368547758070}`, query.Request{}, catalog.ReadAt{}, refused(nserr.InvalidInput)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body Query
			err := Decode([]byte(tc.body), &body, "")
			if err == nil {
				err = body.Resolve()
			}
			req, at := body.Request(), body.At()
			if tc.code != nil {
				assert.Assert(t, err != nil && nserr.CodeOf(err) == *tc.code, "want code %v: %v", *tc.code, err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, req, tc.want)
			assert.DeepEqual(t, at, tc.at)
		})
	}
}

func refused(c nserr.Code) *nserr.Code { return &c }

// FuzzQueryBody: whatever the body, decoding a query answers a request or a typed error, never a
// panic.
func FuzzQueryBody(f *testing.F) {
	for _, seed := range []string{`{"k":1}`, `{"vector":[1,2],"columns":{"a":"b"}}`, `{"columns":{"column_names":["a"]},"vector":{"multi_vector":[[1]]}}`, `null`, ``} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var qb Query
		err := Decode([]byte(body), &qb, "")
		if err == nil {
			err = qb.Resolve()
		}
		if err != nil && nserr.CodeOf(err) != nserr.InvalidInput && nserr.CodeOf(err) != nserr.Unsupported {
			t.Fatalf("%q: untyped error %v", body, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
