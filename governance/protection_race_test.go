package governance

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// hookedProtections runs beforeCreate once, just before the first put-if-absent of a protection
// record: a fake for fault injection, so a test can land an arm between a destroy's read of the
// record and its claim (or a claim between an arm's read and its write).
type hookedProtections struct {
	*storage.Memory
	beforeCreate func()
}

func (b *hookedProtections) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if f := b.beforeCreate; f != nil && strings.HasPrefix(key, registry.ProtectionPrefix) {
		b.beforeCreate = nil
		f()
	}
	return b.Memory.PutIfAbsent(ctx, key, r, size)
}

type allExist struct{}

func (allExist) TableExists(context.Context, ident.ID) error     { return nil }
func (allExist) NamespaceExists(context.Context, ident.ID) error { return nil }

func newProtectionEnv(t *testing.T) (*Service, *hookedProtections, *time.Time) {
	t.Helper()
	b := &hookedProtections{Memory: storage.NewMemory()}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	svc, err := New(Options{Store: registry.NewStore(b), Buckets: LocalBuckets{Base: t.TempDir()}, Objects: allExist{},
		Now: func() time.Time { return now }})
	assert.NilError(t, err)
	return svc, b, &now
}

// TestDestroyClaimOrdersArmAndDrop: a drop and an arm of the same table cannot both answer ok
// (scripts/faults found protect → ok and then the drop it raced → ok). Every interleaving of the
// two is one of: the arm lands first and the drop is refused (409, protected), or the drop's
// claim lands first and the arm is refused (409 ConcurrentModification) until the drop is done.
func TestDestroyClaimOrdersArmAndDrop(t *testing.T) {
	ctx := context.Background()
	id := ident.ID{"ns", "t"}
	const kind = registry.KindTable

	t.Run("claim first, arm refused", func(t *testing.T) {
		svc, _, _ := newProtectionEnv(t)
		release, err := svc.ClaimDestroy(ctx, kind, id, false)
		assert.NilError(t, err)
		_, err = svc.SetProtection(ctx, "user:alice", kind, id, true)
		assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
		assert.ErrorContains(t, err, "being dropped")
		// A disarm meanwhile answers unprotected and leaves the claim to its owner.
		rec, err := svc.SetProtection(ctx, "user:alice", kind, id, false)
		assert.NilError(t, err)
		assert.Assert(t, !rec.Protected)
		// A second destroy (or one after a crashed first) takes the claim over; arms stay refused
		// until the claim's owner lets it go, and the first's release leaves what is not its own.
		release2, err := svc.ClaimDestroy(ctx, kind, id, false)
		assert.NilError(t, err)
		release(ctx)
		_, err = svc.SetProtection(ctx, "user:alice", kind, id, true)
		assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
		// The drops did not happen: the claim goes, and the arm goes through.
		release2(ctx)
		rec, err = svc.SetProtection(ctx, "user:alice", kind, id, true)
		assert.NilError(t, err)
		assert.Assert(t, rec.Protected)
	})

	t.Run("arm lands between the drop's read and its claim", func(t *testing.T) {
		svc, b, _ := newProtectionEnv(t)
		b.beforeCreate = func() {
			_, err := svc.SetProtection(ctx, "user:alice", kind, id, true)
			assert.NilError(t, err)
		}
		_, err := svc.ClaimDestroy(ctx, kind, id, false)
		assert.Equal(t, nserr.CodeOf(err), nserr.InvalidTableState, "the drop is refused: %v", err)
		assert.ErrorContains(t, err, "is protected")
	})

	t.Run("claim lands between the arm's read and its write", func(t *testing.T) {
		svc, b, _ := newProtectionEnv(t)
		b.beforeCreate = func() {
			_, err := svc.ClaimDestroy(ctx, kind, id, false)
			assert.NilError(t, err)
		}
		_, err := svc.SetProtection(ctx, "user:alice", kind, id, true)
		assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "the arm is refused: %v", err)
		rec, err := svc.DescribeProtection(ctx, "user:alice", kind, id)
		assert.NilError(t, err)
		assert.Assert(t, !rec.Protected)
	})

	t.Run("a claim left by a dead drop lapses", func(t *testing.T) {
		svc, _, now := newProtectionEnv(t)
		_, err := svc.ClaimDestroy(ctx, kind, id, false)
		assert.NilError(t, err)
		*now = now.Add(DestroyClaimTTL + time.Second)
		rec, err := svc.SetProtection(ctx, "user:alice", kind, id, true)
		assert.NilError(t, err)
		assert.Assert(t, rec.Protected)
		_, err = svc.ClaimDestroy(ctx, kind, id, false)
		assert.Equal(t, nserr.CodeOf(err), nserr.InvalidTableState)
		// force passes protection and takes no claim.
		release, err := svc.ClaimDestroy(ctx, kind, id, true)
		assert.NilError(t, err)
		release(ctx)
		rec, err = svc.DescribeProtection(ctx, "user:alice", kind, id)
		assert.NilError(t, err)
		assert.Assert(t, rec.Protected, "a forced destroy's release leaves the record alone")
	})
}
