package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// TestMaterializedViewAuthorization: creating a view needs create on the view's namespace (the
// door's rule) and read on its source (checked beside it): a writer of the views' namespace who
// cannot read the source is refused (403) and nothing is created; once granted read on the
// source the same request creates the view; refreshing needs write on the view and read on the
// source.
func TestMaterializedViewAuthorization(t *testing.T) {
	cfg := openFGAConfig(t, "lancecat-mview")
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	key := func(p authz.Principal) string {
		k, _, err := e.keys.Create(ctx, p, "test")
		assert.NilError(t, err)
		return k
	}
	alice, dave := key(authz.User("alice")), key(authz.User("dave"))

	c, err := client.New(e.url, client.WithAPIKey(alice))
	assert.NilError(t, err)
	cat := catalogtest.HTTP(c)
	for _, ns := range []string{"src", "views"} {
		_, err = cat.CreateNamespace(ctx, ident.ID{ns}, nil, catalog.ModeCreate)
		assert.NilError(t, err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := bld.NewRecordBatch()
	bld.Release()
	defer rec.Release()
	_, _, err = cat.CreateTable(ctx, ident.ID{"src", "t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("dave").Subject(), "writer", authz.NamespaceObject([]string{"views"})))

	post := func(apiKey, route string, body any) (int, []byte) {
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+route+"?delimiter=%24", bytes.NewReader(raw))
		assert.NilError(t, err)
		req.Header.Set("content-type", "application/json")
		req.Header.Set("x-api-key", apiKey)
		resp, err := http.DefaultClient.Do(req)
		assert.NilError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	view := map[string]any{"kind": "query", "with_no_data": true, "source_query": "SELECT k * 2 AS k2 FROM src.t"}

	// dave may create tables in views but not read src$t: refused, nothing created.
	st, body := post(dave, "/v1/materialized_view/views$v/create", view)
	expect(t, st, body, 403, nserr.PermissionDenied)
	_, err = cat.DescribeTable(ctx, ident.ID{"views", "v"})
	assert.Assert(t, err != nil)
	// Nor may he create a view where he may not create tables.
	st, body = post(dave, "/v1/materialized_view/src$v/create", view)
	expect(t, st, body, 403, nserr.PermissionDenied)

	// Granted read on the source, he creates the view and refreshes it.
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("dave").Subject(), "reader", authz.TableObject([]string{"src", "t"})))
	st, body = post(dave, "/v1/materialized_view/views$v/create", view)
	expect(t, st, body, 201, 0)
	st, body = post(dave, "/v1/materialized_view/views$v/refresh", map[string]any{})
	expect(t, st, body, 202, 0)
	refreshEnded(t, cfg.Root)

	// Read on the source taken back: his refresh is refused.
	assert.NilError(t, e.gov.authorizer.Revoke(ctx, authz.User("dave").Subject(), "reader", authz.TableObject([]string{"src", "t"})))
	st, body = post(dave, "/v1/materialized_view/views$v/refresh", map[string]any{})
	expect(t, st, body, 403, nserr.PermissionDenied)
}

// refreshEnded waits until the refresh job recorded under root has ended (its task record is
// no longer running), so the test's directories are not removed under it. Bounded only to fail
// rather than hang.
func refreshEnded(t *testing.T, root string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ended := false
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(path, "_maintenance/tasks/") {
				return nil
			}
			raw, _ := os.ReadFile(path)
			var rec struct{ Kind, State, Error string }
			if json.Unmarshal(raw, &rec) == nil && rec.Kind == "materialized_view.refresh" && rec.State != "running" {
				assert.Equal(t, rec.State, "succeeded", rec.Error)
				ended = true
			}
			return nil
		})
		if ended {
			return
		}
	}
	t.Fatal("the refresh job did not end")
}
