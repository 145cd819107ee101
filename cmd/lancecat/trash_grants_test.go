package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/registry"
)

// TestTrashPurgeQueuesGrants (issue 11, item 3): a purge that cannot revoke a purged table's
// grants in OpenFGA (unreachable, or no --authz openfga) queues them on the control root and says
// so in its output, instead of leaving them for the next object at the id to inherit.
func TestTrashPurgeQueuesGrants(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cfg := app.DefaultConfig()
	cfg.Root = root
	ctx := context.Background()
	bucket, _, err := app.OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	store := registry.NewStore(bucket)
	now := time.Now().UTC()
	put := func(id ...string) {
		rec := registry.Trash{Kind: registry.KindTable, ID: id, Location: "0000_" + strings.Join(id, "$"), DroppedAt: now.Add(-48 * time.Hour), ExpiresAt: now.Add(-time.Hour), Placed: true}
		assert.NilError(t, registry.Put(ctx, store, registry.ObjectKey(registry.TrashPrefix, registry.KindTable, id), rec))
	}
	queued := func(id ...string) bool {
		_, _, err := registry.Read[registry.Revocation](ctx, store, registry.RevocationKey(registry.KindTable, id))
		return err == nil
	}
	purge := func(extra ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"trash", "purge", "--root", root}, extra...), &out, &errb)
		return code, out.String(), errb.String()
	}

	put("a", "t1")
	code, out, errs := purge()
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "QUEUED") && strings.Contains(out, "authorization is off"), out)
	assert.Assert(t, strings.Contains(out, "queued"), "the item's GRANTS column says queued: %s", out)
	assert.Assert(t, queued("a", "t1"))

	put("a", "t2")
	code, out, errs = purge("--authz", "openfga", "--openfga-url", "http://127.0.0.1:1", "--openfga-store", "s")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "QUEUED") && strings.Contains(out, "unreachable"), out)
	assert.Assert(t, strings.Contains(errs, "queued, not revoked"), errs)
	assert.Assert(t, queued("a", "t2") && queued("a", "t1"))
}
