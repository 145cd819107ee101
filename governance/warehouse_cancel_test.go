package governance

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// lostAnswerBuckets makes the bucket, then (like an S3 client whose request context was cancelled
// while MakeBucket was in flight) answers the context's error if it is done: the bucket exists,
// the caller was told it failed and that it made nothing.
type lostAnswerBuckets struct {
	LocalBuckets
	onEnsure func()
}

func (b lostAnswerBuckets) Ensure(ctx context.Context, name string) (bool, error) {
	b.onEnsure()
	made, err := b.LocalBuckets.Ensure(context.Background(), name)
	if err == nil && ctx.Err() != nil {
		return false, ctx.Err()
	}
	return made, err
}

// TestWarehouseCreateOutlivesItsClient (issue 11 item 12): a client that goes away while its
// warehouse create makes the bucket must not leave the bucket behind. The create used to make the
// bucket with the request's context; cancelled mid-call, the bucket was made but reported
// unmade, so the undo released the claim and kept the bucket: an orphan no warehouse owns and no
// later create may adopt. The bucket step now runs to its end whatever the client does, so the
// bucket exists exactly when the warehouse does.
func TestWarehouseCreateOutlivesItsClient(t *testing.T) {
	base := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := lostAnswerBuckets{LocalBuckets: LocalBuckets{Base: base}, onEnsure: cancel}
	store := registry.NewStore(storage.NewMemory())
	svc, err := New(Options{Store: store, Buckets: b, Now: func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }})
	assert.NilError(t, err)
	_, err = svc.CreateProject(context.Background(), "", "p1", false)
	assert.NilError(t, err)

	_, err = svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w1", Project: "p1"})
	_, _, rerr := registry.Read[registry.Warehouse](context.Background(), store, registry.WarehouseKey("w1"))
	recorded := rerr == nil
	assert.Equal(t, recorded, err == nil, "the create's answer (%v) is what it did", err)
	assert.Equal(t, exists(filepath.Join(base, "w1")), recorded, "the bucket exists exactly when its warehouse does (create answered %v)", err)
}
