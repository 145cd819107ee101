package app

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client"
)

// TestGoClientDotDelimiters: with "." or ".." as the delimiter the root namespace's route is a dot
// segment, which URL resolution removes (/v1/namespace/./list would become /v1/namespace/list):
// the client sends it percent-encoded, and every call naming the root reaches the root.
func TestGoClientDotDelimiters(t *testing.T) {
	for _, delim := range []string{".", ".."} {
		t.Run(delim, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Root = filepath.Join(t.TempDir(), "catalog")
			cfg.Delimiter = delim
			var mu sync.Mutex
			var paths []string
			seen := roundTripper(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				paths = append(paths, r.URL.EscapedPath())
				mu.Unlock()
				return http.DefaultTransport.RoundTrip(r)
			})
			c, err := client.New(runServer(t, cfg), client.WithDelimiter(delim), client.WithTransport(seen))
			assert.NilError(t, err)
			ctx := context.Background()
			assert.NilError(t, c.CreateNamespace(ctx, []string{"shop"}, nil))
			assert.NilError(t, c.CreateNamespace(ctx, []string{"shop", "eu"}, nil))
			root, err := c.ListNamespaces(ctx, nil)
			assert.NilError(t, err)
			assert.DeepEqual(t, root, []string{"shop"})
			under, err := c.ListNamespaces(ctx, []string{"shop"})
			assert.NilError(t, err)
			assert.DeepEqual(t, under, []string{"eu"})
			ok, err := c.NamespaceExists(ctx, nil)
			assert.NilError(t, err)
			assert.Assert(t, ok)
			tables, err := c.ListTables(ctx, nil)
			assert.NilError(t, err)
			assert.DeepEqual(t, tables, []string{})
			dots := strings.Repeat("%2E", len(delim))
			mu.Lock()
			defer mu.Unlock()
			assert.Assert(t, slices.Contains(paths, "/v1/namespace/"+dots+"/list"), "%q", paths)
			assert.Assert(t, slices.Contains(paths, "/v1/namespace/shop/list"), "%q", paths)
		})
	}
}
