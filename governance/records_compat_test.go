package governance

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// A newer version's fields in a record: a tombstone like the project's deleting mark, which a
// version that predates it does not know.
const newerFields = `"retiring": true, "retiring_since": "2026-01-02T03:04:05Z"`

// addNewerFields rewrites the stored record at key as a newer replica would: its own fields plus
// newerFields.
func addNewerFields(t *testing.T, b *storage.Memory, key string) {
	t.Helper()
	ctx := context.Background()
	rc, _, err := b.Get(ctx, key)
	assert.NilError(t, err)
	raw, err := io.ReadAll(rc)
	assert.NilError(t, err)
	assert.NilError(t, rc.Close())
	body := strings.TrimSpace(string(raw))
	body = strings.TrimSuffix(body, "}") + ", " + newerFields + "}"
	_, err = b.Put(ctx, key, strings.NewReader(body), int64(len(body)))
	assert.NilError(t, err)
}

// storedFields is the stored record at key as JSON fields.
func storedFields(t *testing.T, b *storage.Memory, key string) map[string]any {
	t.Helper()
	rc, _, err := b.Get(context.Background(), key)
	assert.NilError(t, err)
	defer rc.Close()
	var fields map[string]any
	assert.NilError(t, json.NewDecoder(rc).Decode(&fields))
	return fields
}

func assertNewerFieldsIntact(t *testing.T, b *storage.Memory, key string) {
	t.Helper()
	fields := storedFields(t, b, key)
	assert.Equal(t, fields["retiring"], true, "%v", fields)
	assert.Equal(t, fields["retiring_since"], "2026-01-02T03:04:05Z", "%v", fields)
}

// TestControlWritesKeepNewerFields: the control doors' read-modify-writes (project and warehouse
// protection and status, the purge's claim on a trash record) keep the fields a newer replica
// wrote, so a rolling upgrade's older replica never erases a newer one's tombstone (issue 12
// item 9: before, an older replica's protection write dropped the project's deleting mark).
func TestControlWritesKeepNewerFields(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	newEnv := func(t *testing.T) (*Service, *storage.Memory) {
		b := storage.NewMemory()
		svc, err := New(Options{Store: registry.NewStore(b), Buckets: LocalBuckets{Base: t.TempDir()}, Now: func() time.Time { return now }})
		assert.NilError(t, err)
		_, err = svc.CreateProject(ctx, "", "p1", false)
		assert.NilError(t, err)
		return svc, b
	}
	t.Run("project protection", func(t *testing.T) {
		svc, b := newEnv(t)
		addNewerFields(t, b, registry.ProjectKey("p1"))
		rec, err := svc.SetProjectProtection(ctx, "", "p1", true)
		assert.NilError(t, err)
		assert.Assert(t, rec.Protected)
		assertNewerFieldsIntact(t, b, registry.ProjectKey("p1"))
		assert.Equal(t, storedFields(t, b, registry.ProjectKey("p1"))["protected"], true)
	})
	t.Run("warehouse protection and status", func(t *testing.T) {
		svc, b := newEnv(t)
		_, err := svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w1", Project: "p1"})
		assert.NilError(t, err)
		addNewerFields(t, b, registry.WarehouseKey("w1"))
		_, err = svc.SetWarehouseProtection(ctx, "", "w1", true)
		assert.NilError(t, err)
		_, err = svc.SetWarehouseStatus(ctx, "", "w1", false)
		assert.NilError(t, err)
		assertNewerFieldsIntact(t, b, registry.WarehouseKey("w1"))
		assert.Equal(t, storedFields(t, b, registry.WarehouseKey("w1"))["status"], registry.StatusDeactivated)
	})
	t.Run("trash purge claim", func(t *testing.T) {
		svc, b := newEnv(t)
		trash := NewTrash(svc, time.Hour, nil)
		key := trashKey([]string{"a", "t"})
		assert.NilError(t, registry.Put(ctx, svc.store, key, registry.Trash{Kind: registry.KindTable, ID: []string{"a", "t"},
			Location: "0000_a$t", DroppedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour), Placed: true}))
		addNewerFields(t, b, key)
		rec, err := trash.ClaimPurge(ctx, key, now)
		assert.NilError(t, err)
		assert.Assert(t, rec.Purging)
		assertNewerFieldsIntact(t, b, key)
		trash.ReleasePurge(ctx, key, now)
		assertNewerFieldsIntact(t, b, key)
		assert.Equal(t, storedFields(t, b, key)["purging"], nil, "the claim was released")
	})
}
