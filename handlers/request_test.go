package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

func newContext(body string, header http.Header, rawID string) (echo.Context, *httptest.ResponseRecorder) {
	req := httptest.NewRequest(http.MethodPost, "/v1/namespace/x/create", strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req = req.WithContext(authz.WithIdentity(req.Context(), authz.IdentityFromHeaders(req.Header)))
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	c.SetParamNames("id")
	c.SetParamValues(rawID)
	return c, rec
}

func TestHeaderIdentityBeatsBodyIdentity(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		body   string
		want   authz.Identity
	}{
		{"body only", nil, `{"identity":{"api_key":"body-key","auth_token":"body-tok"}}`,
			authz.Identity{APIKey: "body-key", BearerToken: "body-tok"}},
		{"header beats body", http.Header{"X-Api-Key": {"hdr-key"}}, `{"identity":{"api_key":"body-key","auth_token":"body-tok"}}`,
			authz.Identity{APIKey: "hdr-key", BearerToken: "body-tok"}},
		{"both headers", http.Header{"X-Api-Key": {"k"}, "Authorization": {"Bearer t"}}, `{"identity":{"api_key":"b","auth_token":"b"}}`,
			authz.Identity{APIKey: "k", BearerToken: "t"}},
		{"none", nil, `{}`, authz.Identity{}},
	}
	s := New(Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, _ := newContext(c.body, c.header, "x")
			var req nsapi.CreateNamespaceRequest
			id, err := s.decodeRequest(ctx, nil, &req)
			assert.NilError(t, err)
			assert.DeepEqual(t, id, ident.ID{"x"})
			assert.DeepEqual(t, *req.Id, []string{"x"})
			assert.Equal(t, authz.IdentityFrom(ctx.Request().Context()), c.want)
		})
	}
}

func TestResponseForms(t *testing.T) {
	t.Run("nil JSON is an empty object", func(t *testing.T) {
		c, rec := newContext("", nil, "x")
		assert.NilError(t, writeJSON(c, nil))
		assert.Equal(t, rec.Code, 200)
		assert.Equal(t, rec.Body.String(), "{}")
	})
	t.Run("count_rows is a plain integer", func(t *testing.T) {
		c, rec := newContext("", nil, "x")
		assert.NilError(t, writeCount(c, 1234567))
		assert.Equal(t, rec.Body.String(), "1234567")
	})
	// The spec's explain/analyze answer is application/json with a string schema, and the remote
	// clients parse it with serde as a JSON string: plain text fails them.
	t.Run("plans are a JSON string", func(t *testing.T) {
		c, rec := newContext("", nil, "x")
		assert.NilError(t, writeText(c, "ProjectionExec\n  LanceScan"))
		var plan string
		assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &plan))
		assert.Equal(t, plan, "ProjectionExec\n  LanceScan")
		assert.Assert(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"))
	})
	t.Run("query is an Arrow IPC file", func(t *testing.T) {
		c, rec := newContext("", nil, "x")
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
		rr, err := array.NewRecordReader(schema, nil)
		assert.NilError(t, err)
		assert.NilError(t, writeArrowFile(c, rr))
		assert.Equal(t, rec.Header().Get("Content-Type"), ArrowFileType)
		assert.Assert(t, strings.HasPrefix(rec.Body.String(), "ARROW1"))
		// An empty answer is still a file that carries the schema.
		f, err := ipc.NewFileReader(bytes.NewReader(rec.Body.Bytes()))
		assert.NilError(t, err)
		assert.Equal(t, f.NumRecords(), 0)
		assert.Assert(t, f.Schema().Equal(schema))
	})
	t.Run("exists answers by status", func(t *testing.T) {
		c, rec := newContext("", nil, "x")
		assert.NilError(t, writeExists(c, nil))
		assert.Equal(t, rec.Code, 200)
		assert.Assert(t, nserr.Is(writeExists(c, nserr.TableNotFoundf("t")), nserr.ErrTableNotFound))
	})
}

// TestCreateRequestDecodedOnce: the create doors' decoder reads the body once, whatever its
// content type, and every later caller (the handler after a guard) gets the very same request,
// mode canonical; a mode in the query of a body-mode door is refused.
func TestCreateRequestDecodedOnce(t *testing.T) {
	s := New(Options{})
	for _, ct := range []string{"application/json", "text/plain", ""} {
		for _, spelled := range []string{"over-write", "Over Write", "OVER_WRITE", "overwrite"} {
			c, _ := newContext(`{"mode":"`+spelled+`"}`, http.Header{"Content-Type": {ct}}, "n1$victim")
			id, guard, err := s.createNamespaceRequest(c, nil)
			assert.NilError(t, err)
			assert.DeepEqual(t, id, ident.ID{"n1", "victim"})
			assert.Equal(t, *guard.Mode, "Overwrite", "%q as %q", spelled, ct)
			_, handler, err := s.createNamespaceRequest(c, nil) // the body is consumed: only the cache answers
			assert.NilError(t, err)
			assert.Equal(t, handler, guard)
		}
	}
	c, _ := newContext(`{"mode":"create"}`, nil, "n1$victim")
	c.Request().URL.RawQuery = "mode=overwrite"
	_, _, err := s.createNamespaceRequest(c, nil)
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), err)
	_, _, err = s.createNamespaceRequest(c, nil)
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "the error is the request's, every time: %v", err)
}
