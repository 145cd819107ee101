package app

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// TestScheduledTrashPurge: with --trash-purge-interval, a replica purges expired trash on its own.
func TestScheduledTrashPurge(t *testing.T) {
	cfg := specConfig(t)
	cfg.Governance.TrashGraceDays = 7
	e := newSpecEnv(t, cfg)
	spec := e.as(t, "")
	ctx := context.Background()
	cn, err := spec.CreateNamespaceWithResponse(ctx, "a", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	cr, err := spec.CreateTableWithBodyWithResponse(ctx, "a$u", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	d, err := spec.DropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)

	control, err := storage.NewFS(filepath.Join(cfg.Root, "_lancecat"))
	assert.NilError(t, err)
	store, key := registry.NewStore(control), tableTrashKey("a", "u")
	_, err = registry.Mutate(ctx, store, key, func(r *registry.Trash) error {
		r.ExpiresAt = time.Now().Add(-time.Minute)
		return nil
	})
	assert.NilError(t, err)

	loop, stop := context.WithCancel(ctx)
	defer stop()
	var logs syncBuffer
	go maintenance.PurgeTrashEvery(loop, e.gov.trash, 20*time.Millisecond, slog.New(slog.NewJSONHandler(&logs, nil)))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if hasRecord[registry.Trash](t, store, key) {
			return poll.Continue("the record is still there")
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if !bytes.Contains([]byte(logs.String()), []byte(`"purged":1`)) {
			return poll.Continue("no purge logged yet: %s", logs.String())
		}
		return poll.Success()
	}, poll.WithTimeout(5*time.Second), poll.WithDelay(20*time.Millisecond))
}
