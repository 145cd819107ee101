package maintenance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// A table is worked by one replica at a time through a lease object on the table's own root
// (so it lives with the table, in whatever bucket that is): _maintenance/lease.json holding the
// holder and an expiry. It is written with the store's conditional puts only:
//
//   - acquire: put-if-absent; if one exists and has expired (its holder crashed or stalled past
//     the expiry), replace it with put-if-match on the ETag we read — of two replicas taking over
//     the same expired lease only one wins;
//   - renew: put-if-match on our own ETag, every TTL/3 while we work; a renewal that loses means
//     another replica took an expired lease from us, and our work context is cancelled;
//   - release: put-if-match writing an already-expired lease (never a delete, which could remove
//     a lease another replica took after ours expired).
//
// Clock skew between replicas eats into the TTL; the default (2 minutes, renewed every 40 s)
// leaves room for seconds of skew.

// LeaseKey is the lease object's key under a table's root.
const LeaseKey = MaintenanceDir + "lease.json"

// MaintenanceDir holds the lease and the last-run stamp under a table's root. Lance lists only
// its own directories (data/, _versions/, …) and never looks here.
const MaintenanceDir = "_maintenance/"

// DefaultLeaseTTL is how long a lease lasts without renewal.
const DefaultLeaseTTL = 2 * time.Minute

// ErrLeaseHeld is answered when another replica holds a live lease on the table.
var ErrLeaseHeld = errors.New("maintenance: another replica holds the table's lease")

type leaseRecord struct {
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expires_at"`
}

// lease is one held lease.
type lease struct {
	store  storage.Bucket
	holder string
	ttl    time.Duration
	etag   string
	now    func() time.Time
}

func encodeLease(rec leaseRecord) []byte {
	b, _ := json.Marshal(rec)
	return b
}

// acquireLease takes the table's lease for holder, or answers ErrLeaseHeld (naming the holder).
func acquireLease(ctx context.Context, store storage.Bucket, holder string, ttl time.Duration, now func() time.Time) (*lease, error) {
	l := &lease{store: store, holder: holder, ttl: ttl, now: now}
	body := encodeLease(leaseRecord{Holder: holder, ExpiresAt: now().Add(ttl)})
	info, err := store.PutIfAbsent(ctx, LeaseKey, bytes.NewReader(body), int64(len(body)))
	if err == nil {
		l.etag = info.ETag
		return l, nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return nil, fmt.Errorf("maintenance: lease: %w", err)
	}
	rc, cur, err := store.Get(ctx, LeaseKey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrLeaseHeld // released and deleted between our calls: let the next sweep try
	}
	if err != nil {
		return nil, fmt.Errorf("maintenance: lease: %w", err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("maintenance: lease: %w", err)
	}
	var rec leaseRecord
	if json.Unmarshal(data, &rec) == nil && now().Before(rec.ExpiresAt) {
		return nil, fmt.Errorf("%w (%s, until %s)", ErrLeaseHeld, rec.Holder, rec.ExpiresAt.Format(time.RFC3339))
	}
	// Expired (or unreadable: a torn write of a crashed holder): take it over, if nobody beat us.
	info, err = store.PutIfMatch(ctx, LeaseKey, bytes.NewReader(body), int64(len(body)), cur.ETag)
	if errors.Is(err, storage.ErrPreconditionFailed) {
		return nil, ErrLeaseHeld
	}
	if err != nil {
		return nil, fmt.Errorf("maintenance: lease: %w", err)
	}
	l.etag = info.ETag
	return l, nil
}

func (l *lease) put(ctx context.Context, expires time.Time) error {
	body := encodeLease(leaseRecord{Holder: l.holder, ExpiresAt: expires})
	info, err := l.store.PutIfMatch(ctx, LeaseKey, bytes.NewReader(body), int64(len(body)), l.etag)
	if err != nil {
		return err
	}
	l.etag = info.ETag
	return nil
}

// keep renews the lease every TTL/3 until ctx ends, and cancels lost when a renewal fails (the
// lease expired and another replica took it, or storage refused us long enough).
func (l *lease) keep(ctx context.Context, lost context.CancelFunc) {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := l.put(ctx, l.now().Add(l.ttl)); err != nil && ctx.Err() == nil {
				lost()
				return
			}
		}
	}
}

// release ends the lease by writing it expired.
func (l *lease) release(ctx context.Context) error {
	return l.put(context.WithoutCancel(ctx), time.Time{})
}

// hold keeps l renewed while the caller works: it returns the work context (cancelled if the
// lease is lost to another replica) and a stop that ends the renewal and releases the lease.
func (l *lease) hold(ctx context.Context) (work context.Context, stop func()) {
	work, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); l.keep(work, cancel) }()
	return work, func() {
		cancel()
		<-done
		_ = l.release(ctx)
	}
}
