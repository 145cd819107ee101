package catalogtest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/ident"
)

// TestHTTPSendsOptions: a lifecycle call's options reach the wire as the doors read them
// (force=true, purge=true in the query), on every operation that takes them, and a call without
// them sends neither.
func TestHTTPSendsOptions(t *testing.T) {
	var (
		mu  sync.Mutex
		got *http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = r
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	assert.NilError(t, err)
	cat := catalogtest.HTTP(c)
	ctx := context.Background()
	at := ident.ID{"a", "t"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)

	for _, tc := range []struct {
		name string
		path string
		call func(opts ...catalog.Option) error
	}{
		{"CreateNamespace", "/v1/namespace/a/create", func(opts ...catalog.Option) error {
			_, err := cat.CreateNamespace(ctx, ident.ID{"a"}, nil, catalog.ModeOverwrite, opts...)
			return err
		}},
		{"DropNamespace", "/v1/namespace/a/drop", func(opts ...catalog.Option) error {
			_, err := cat.DropNamespace(ctx, ident.ID{"a"}, "", catalog.BehaviorCascade, opts...)
			return err
		}},
		{"CreateTable", "/v1/table/a$t/create", func(opts ...catalog.Option) error {
			_, _, err := cat.CreateTable(ctx, at, catalog.NewTable{Mode: catalog.ModeOverwrite, Schema: schema}, opts...)
			return err
		}},
		{"RegisterTable", "/v1/table/a$t/register", func(opts ...catalog.Option) error {
			_, err := cat.RegisterTable(ctx, at, "t.lance", catalog.ModeOverwrite, nil, opts...)
			return err
		}},
		{"DropTable", "/v1/table/a$t/drop", func(opts ...catalog.Option) error {
			_, err := cat.DropTable(ctx, at, opts...)
			return err
		}},
		{"DeregisterTable", "/v1/table/a$t/deregister", func(opts ...catalog.Option) error {
			_, err := cat.DeregisterTable(ctx, at, opts...)
			return err
		}},
		{"RenameTable", "/v1/table/a$t/rename", func(opts ...catalog.Option) error {
			_, err := cat.RenameTable(ctx, at, nil, "u", opts...)
			return err
		}},
		{"CommitTableVersions", "/v1/table/batch-commit", func(opts ...catalog.Option) error {
			_, _, err := cat.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{{Table: at, Deregister: true}}, opts...)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query := func(opts ...catalog.Option) (force, purge string) {
				t.Helper()
				assert.NilError(t, tc.call(opts...))
				mu.Lock()
				defer mu.Unlock()
				assert.Equal(t, got.URL.Path, tc.path)
				return got.URL.Query().Get("force"), got.URL.Query().Get("purge")
			}
			force, purge := query()
			assert.Equal(t, force+purge, "", "no options: neither parameter")
			force, purge = query(catalog.WithForce())
			assert.Equal(t, force, "true")
			assert.Equal(t, purge, "")
			force, purge = query(catalog.WithForce(), catalog.WithPurge())
			assert.Equal(t, force, "true")
			assert.Equal(t, purge, "true")
		})
	}
}
