package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/wire"
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
	if _, o.err = o.s.pathID(c, params.Delimiter); o.err == nil {
		m, err := wire.MergeInsert(params)
		o.got, o.err = m.On, err
	}
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
