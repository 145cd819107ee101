package governed_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/catalog/governed"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestGovernedConformanceWithOpenFGA: the governed decorator over the directory namespace, with
// real OpenFGA keeping tuples in step (every create seeds, every drop revokes), passes the
// conformance suite for a caller who administers the estate (skips without OpenFGA; fails under
// make test, which starts it).
func TestGovernedConformanceWithOpenFGA(t *testing.T) {
	url := testenv.OpenFGA(t)
	ctx := context.Background()
	quiet := authz.WithAuditLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	store, err := authz.EnsureStore(ctx, url, fmt.Sprintf("catalogtest-%d", time.Now().UnixNano()), quiet)
	assert.NilError(t, err)
	fga, err := authz.New(url, store, quiet)
	assert.NilError(t, err)
	alice := authz.User("alice")
	assert.NilError(t, fga.GrantEstateAdminTo(ctx, alice.Subject()))

	catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
		dir := t.TempDir()
		fs, err := storage.NewFS(dir)
		assert.NilError(t, err)
		return governed.New(namespace.New(fs, namespace.Options{RootURI: dir}), governed.Options{Authorizer: fga})
	}, catalogtest.Context(authz.WithPrincipal(ctx, alice)))
}
