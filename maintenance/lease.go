package maintenance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lancecat/lancecat/internal/lease"
	"github.com/lancecat/lancecat/storage"
)

// A table is worked by one replica at a time through a lease (internal/lease: the protocol, its
// staleness and clock-skew margin) on the table's own root, so it lives with the table in
// whatever bucket that is: _maintenance/lease.json. The root-wide drift repair holds the same
// kind of lease under the control directory (driftLeaseStore). A lease is renewed every TTL/3
// while the pass works; a renewal that loses (another replica took the lease over) cancels the
// pass's context; the lease is released (written released) when the pass ends.
//
// Records are the package's: holder, token, acquired_at, updated_at, expires_at (still written,
// for replicas from before the package, which judge a lease by it alone), released. Records those
// replicas wrote ({"holder","expires_at"}) are judged by their expiry.

// LeaseKey is the lease object's key under a table's root.
const LeaseKey = MaintenanceDir + "lease.json"

// MaintenanceDir holds the lease and the last-run stamp under a table's root. Lance lists only
// its own directories (data/, _versions/, …) and never looks here.
const MaintenanceDir = "_maintenance/"

// DefaultLeaseTTL is how long a lease lasts without renewal.
const DefaultLeaseTTL = 2 * time.Minute

// ErrLeaseHeld is answered when another replica holds a live lease on the table.
var ErrLeaseHeld = errors.New("maintenance: another replica holds the table's lease")

// acquireLease takes the lease at store's LeaseKey for holder, or answers ErrLeaseHeld naming
// the holder.
func acquireLease(ctx context.Context, store storage.Bucket, holder string, ttl time.Duration, now func() time.Time) (*lease.Lease, error) {
	l, err := lease.Acquire(ctx, store, LeaseKey, lease.Options{Holder: holder, StaleAfter: ttl, Now: now})
	var held *lease.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w (%s, until %s)", ErrLeaseHeld, held.Who(), held.Until.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return nil, fmt.Errorf("maintenance: lease: %w", err)
	}
	return l, nil
}

// holdLease keeps l renewed every ttl/3 while the caller works: it answers the work context
// (cancelled if the lease is lost to another replica) and a stop that ends the renewals and
// releases the lease (answering the release's error, for the caller's log).
func holdLease(ctx context.Context, l *lease.Lease, ttl time.Duration) (work context.Context, stop func() error) {
	work, end := l.Hold(ctx, ttl/3, nil)
	return work, func() error {
		_ = end()
		return l.Release(ctx)
	}
}
