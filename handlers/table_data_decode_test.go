package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/query"
)

// onCapture is a spec server whose merge_insert only records what the decoder made of the
// request, so the test goes through the generated query binding the real route uses.
type onCapture struct {
	nsapi.ServerInterface
	s   *Server
	got []string
	err error
}

func (o *onCapture) MergeInsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.MergeInsertIntoTableParams) error {
	_, o.got, o.err = o.s.mergeInsertRequest(c, params)
	return nil
}

// TestMergeInsertOnFromQuery: spec 9a92264 makes `on` a composite key sent as a repeated query
// parameter; the single key older clients (both pinned SDKs) send must keep decoding.
func TestMergeInsertOnFromQuery(t *testing.T) {
	cases := []struct {
		name  string
		query string
		want  []string
		bad   bool // refused as InvalidInput
	}{
		{"single key, as old clients send it", "on=id", []string{"id"}, false},
		{"composite key, repeated", "on=a&on=b", []string{"a", "b"}, false},
		{"order is the client's", "on=b&on=a", []string{"b", "a"}, false},
		{"a field listed twice counts once", "on=a&on=b&on=a", []string{"a", "b"}, false},
		{"nested and quoted paths pass through", "on=s.x&on=%60a.b%60", []string{"s.x", "`a.b`"}, false},
		{"a comma is part of a path, not a separator", "on=a%2Cb", []string{"a,b"}, false},
		{"an empty field", "on=", nil, true},
		{"an empty field among others", "on=a&on=", nil, true},
	}
	s := New(Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			capture := &onCapture{s: s}
			w := &nsapi.ServerInterfaceWrapper{Handler: capture}
			req := httptest.NewRequest(http.MethodPost, "/v1/table/t/merge_insert?"+tc.query, nil)
			c := echo.New().NewContext(req, httptest.NewRecorder())
			c.SetParamNames("id")
			c.SetParamValues("t")
			assert.NilError(t, w.MergeInsertIntoTable(c))
			if tc.bad {
				assert.Assert(t, nserr.Is(capture.err, nserr.ErrInvalidInput), "%v", capture.err)
				return
			}
			assert.NilError(t, capture.err)
			assert.DeepEqual(t, capture.got, tc.want)
		})
	}

	t.Run("no on at all", func(t *testing.T) {
		// The generated binding refuses it before the handler: `on` is required.
		capture := &onCapture{s: s}
		w := &nsapi.ServerInterfaceWrapper{Handler: capture}
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/v1/table/t/merge_insert", nil), httptest.NewRecorder())
		c.SetParamNames("id")
		c.SetParamValues("t")
		assert.Assert(t, w.MergeInsertIntoTable(c) != nil)
		assert.Assert(t, capture.got == nil && capture.err == nil, "the handler must not run")
	})
}

// TestMergeInsertStillUnsupported: without a catalog behind the handlers a merge answers 406 once
// decoded, and a malformed key is told so first (with a catalog it is backed: server tests).
func TestMergeInsertStillUnsupported(t *testing.T) {
	s := New(Options{})
	ctx, _ := newContext("", nil, "t")
	err := s.MergeInsertIntoTable(ctx, "t", nsapi.MergeInsertIntoTableParams{On: []string{"a", "b"}})
	assert.Assert(t, nserr.Is(err, nserr.ErrUnsupported), "%v", err)
	err = s.MergeInsertIntoTable(ctx, "t", nsapi.MergeInsertIntoTableParams{On: []string{""}})
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
}

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
			req, err := decodeMergeInsertBody([]byte(tc.body))
			if tc.bad {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, *req.On, tc.want)
		})
	}
	// The other fields decode as the generated type says.
	req, err := decodeMergeInsertBody([]byte(`{"on":"id","when_matched_update_all":true,"id":["ns","t"]}`))
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
			got, err := queryOrdering([]byte(tc.body), tc.path...)
			if tc.bad {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestQueryOperationsDecodeOrderBy: the three query operations run the order_by decoder, and a
// valid one still answers Unsupported (the data plane does not sort yet; nothing is ignored).
func TestQueryOperationsDecodeOrderBy(t *testing.T) {
	s := New(Options{})
	ops := map[string]struct {
		call func(c echo.Context) error
		wrap func(orderBy string) string
	}{
		"QueryTable": {func(c echo.Context) error { return s.QueryTable(c, "t", nsapi.QueryTableParams{}) },
			func(o string) string { return `{"k":10,"order_by":` + o + `}` }},
		"AnalyzeTableQueryPlan": {func(c echo.Context) error {
			return s.AnalyzeTableQueryPlan(c, "t", nsapi.AnalyzeTableQueryPlanParams{})
		},
			func(o string) string { return `{"k":10,"order_by":` + o + `}` }},
		"ExplainTableQueryPlan": {func(c echo.Context) error {
			return s.ExplainTableQueryPlan(c, "t", nsapi.ExplainTableQueryPlanParams{})
		},
			func(o string) string { return `{"query":{"k":10,"order_by":` + o + `}}` }},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			ctx, _ := newContext(op.wrap(`[{"column_name":"a"}]`), nil, "t")
			err := op.call(ctx)
			assert.Assert(t, nserr.Is(err, nserr.ErrUnsupported), "%v", err)
			ctx, _ = newContext(op.wrap(`null`), nil, "t")
			err = op.call(ctx)
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
			assert.Assert(t, strings.Contains(err.Error(), "order_by"), "%v", err)
		})
	}
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
				NProbes: 20, BypassVectorIndex: true}},
			catalog.ReadAt{Branch: "b"}, nil},
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
	s := New(Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newContext(tc.body, nil, "t")
			var body queryBody
			_, order, err := s.decodeQueryRequest(c, nil, &body, "order_by")
			var req query.Request
			var at catalog.ReadAt
			if err == nil {
				req, at, err = queryRequest(&body, order)
			}
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
	s := New(Options{})
	f.Fuzz(func(t *testing.T, body string) {
		c, _ := newContext(body, nil, "t")
		var qb queryBody
		_, order, err := s.decodeQueryRequest(c, nil, &qb, "order_by")
		if err == nil {
			_, _, err = queryRequest(&qb, order)
		}
		if err != nil && nserr.CodeOf(err) != nserr.InvalidInput && nserr.CodeOf(err) != nserr.Unsupported {
			t.Fatalf("%q: untyped error %v", body, err)
		}
	})
}
