// Package lease is the catalog's one lease protocol: one holder at a time of a piece of work
// across stateless replicas, arbitrated by an object store's conditional writes alone (no
// process, lock service or shared clock is assumed). Its users are the maintenance service's
// table and drift leases, the materialized-view refresh lease and the background index-build
// claim; each keeps its own object (key) and record fields (the payload), this package the
// protocol:
//
//   - acquire: put-if-absent; if a record exists and is released or stale (its holder died or
//     stalled), replace it with put-if-match on the ETag read, so of any number of replicas
//     taking it over exactly one wins. A live record answers a *HeldError naming its holder.
//   - renew: put-if-match on the holder's own ETag. A refused renewal means another replica
//     took the lease over (we were stale): ErrLost. The holder learns it through Hold's work
//     context (cancelled) or Check, and stops before committing.
//   - release: put-if-match writing the record released (anyone may take it at once), or, for
//     a user that deletes it, a renewal (proving the record still ours and pushing its
//     staleness out) followed by the delete. A holder that lost the lease writes nothing.
//   - staleness: a record is stale once StaleAfter+SkewMargin passed since it was renewed, by
//     the reader's clock; its holder counts its own lease safe only until StaleAfter-SkewMargin
//     after its last renewal, by its clock. So the replicas' clocks may disagree by up to
//     SkewMargin without two of them believing they hold the lease.
//
// Nothing here deletes a record it cannot prove its own: an unreadable lease object is not
// removed, only replaced by a conditional put once it has sat unchanged past staleness (see
// current.until).
//
// No lease can stop a holder that is paused between its last check and its commit for longer
// than the staleness (a process frozen mid-request): users that commit something keep their own
// guard at the commit (the view's head check, Lance's version put-if-absent).
package lease

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// DefaultSkewMargin is how far the replicas' clocks may disagree, when Options leave it 0 (but
// at most a quarter of StaleAfter, so short leases stay leases).
const DefaultSkewMargin = 10 * time.Second

// ErrHeld is matched (errors.Is) by every *HeldError.
var ErrHeld = errors.New("lease: held by another holder")

// ErrLost is the error of a renewal or release of a lease another holder has taken over (or
// that went unrenewed past the point where another may take it).
var ErrLost = errors.New("lease: lost")

// ErrReleased is the error of a renewal of a lease already released.
var ErrReleased = errors.New("lease: already released")

// HeldError is the answer to an acquisition of a lease another holder holds: its record, for the
// caller's own conflict text (409 naming the running task and its replica).
type HeldError struct {
	Key string
	// Record is the live holder's record. Holder is "" when the object is unreadable (then
	// RenewedAt is its modification time).
	Record Record
	// Until is when the record goes stale, by this replica's clock, unless renewed.
	Until time.Time
}

// Who names the holder for a message.
func (e *HeldError) Who() string {
	if e.Record.Holder == "" {
		return "another replica (unreadable lease record)"
	}
	return e.Record.Holder
}

func (e *HeldError) Error() string {
	task := ""
	if e.Record.Task != "" {
		task = ", task " + e.Record.Task
	}
	return fmt.Sprintf("lease %s: held by %s%s, last renewed %s, stale after %s", e.Key, e.Who(), task,
		e.Record.RenewedAt.UTC().Format(time.RFC3339), e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Options are one user's settings of its leases.
type Options struct {
	// Holder names this replica in the record.
	Holder string
	// Task is the holder's task id, if known when acquiring (SetTask sets it later).
	Task string
	// Payload is the user's fields of the record: anything that marshals to a JSON object
	// whose keys are not the protocol's (nil: none). Written with every renewal.
	Payload any
	// StaleAfter is how long a record may go unrenewed before another replica may take the
	// lease over. Required; several renewal intervals.
	StaleAfter time.Duration
	// SkewMargin is how far replicas' clocks may disagree (0: DefaultSkewMargin, at most
	// StaleAfter/4).
	SkewMargin time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// DeleteOnRelease makes Release delete the record instead of writing it released (for a
	// user whose records are many and short-lived, and whose older replicas know no released
	// flag).
	DeleteOnRelease bool
}

func (o Options) withDefaults() (Options, error) {
	if o.StaleAfter <= 0 {
		return o, errors.New("lease: StaleAfter must be positive")
	}
	if o.Holder == "" {
		return o, errors.New("lease: a holder name is required")
	}
	if o.SkewMargin <= 0 {
		o.SkewMargin = min(DefaultSkewMargin, o.StaleAfter/4)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Lease is a lease this replica holds. Its methods are safe for concurrent use.
type Lease struct {
	store storage.Bucket
	key   string
	o     Options

	token string

	mu   sync.Mutex
	rec  Record
	etag string
	// ended: released (ErrReleased) or taken over (an ErrLost); no more writes.
	ended error
}

// maxAttempts bounds an acquisition's rounds of put, read and take-over, each lost to another
// replica's write in between; past it the lease is answered held by whoever wrote last.
const maxAttempts = 4

// Acquire takes the lease at key in store: a new record, or a released or stale one taken over.
// A live record of another holder answers a *HeldError.
func Acquire(ctx context.Context, store storage.Bucket, key string, o Options) (*Lease, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	payload, err := payloadFields(o.Payload)
	if err != nil {
		return nil, err
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	l := &Lease{store: store, key: key, o: o, token: token}
	var last current
	for range maxAttempts {
		now := o.Now()
		rec := Record{Holder: o.Holder, Task: o.Task, Token: token, AcquiredAt: now, RenewedAt: now,
			ExpiresAt: now.Add(o.StaleAfter), Payload: payload}
		body := rec.encode()
		info, err := store.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
		if err == nil {
			l.rec, l.etag = rec, info.ETag
			return l, nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return l.adopt(ctx, err)
		}
		cur, err := read(ctx, store, key)
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted (released) between our put and read: put again
		}
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", key, err)
		}
		last = cur
		if cur.bad == nil && cur.rec.Token == token {
			// Our own put after all: a client-side retry of a request whose first try landed
			// answers "exists" (S3 SDKs retry on timeouts).
			l.rec, l.etag = cur.rec, cur.info.ETag
			return l, nil
		}
		if until := cur.until(o.StaleAfter, o.SkewMargin); now.Before(until) {
			return nil, &HeldError{Key: key, Record: cur.heldBy(), Until: until}
		}
		info, err = store.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), cur.info.ETag)
		if err == nil {
			l.rec, l.etag = rec, info.ETag
			return l, nil
		}
		if !errors.Is(err, storage.ErrPreconditionFailed) {
			return l.adopt(ctx, err)
		}
		// Renewed, released or taken over since we read it: look again.
	}
	return nil, &HeldError{Key: key, Record: last.heldBy(), Until: last.until(o.StaleAfter, o.SkewMargin)}
}

// adopt answers l held if the record at its key carries its token although the put that wrote
// it answered err (it failed ambiguously: applied, then a timeout), else err.
func (l *Lease) adopt(ctx context.Context, err error) (*Lease, error) {
	cur, rerr := read(context.WithoutCancel(ctx), l.store, l.key)
	if rerr == nil && cur.bad == nil && cur.rec.Token == l.token {
		l.rec, l.etag = cur.rec, cur.info.ETag
		return l, nil
	}
	return nil, fmt.Errorf("lease %s: %w", l.key, err)
}

// Probe answers a *HeldError while a live record is at key, nil when there is none or it is
// released or stale (a caller about to do the work itself without the lease, asking whether a
// holder is at it).
func Probe(ctx context.Context, store storage.Bucket, key string, o Options) error {
	if o.Holder == "" {
		o.Holder = "probe"
	}
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	cur, err := read(ctx, store, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease %s: %w", key, err)
	}
	if until := cur.until(o.StaleAfter, o.SkewMargin); o.Now().Before(until) {
		return &HeldError{Key: key, Record: cur.heldBy(), Until: until}
	}
	return nil
}

// Record is the lease's record as last written.
func (l *Lease) Record() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// SetTask names the holder's task in the record from the next write on (Renew it to write now).
func (l *Lease) SetTask(task string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec.Task = task
}

// safeUntil is when, by this replica's clock, another replica may start to see the lease stale.
func (l *Lease) safeUntil() time.Time {
	return l.rec.RenewedAt.Add(l.o.StaleAfter - l.o.SkewMargin)
}

// Check answers nil while the lease is still this holder's to act under: not released, not
// taken over as far as it knows, and renewed recently enough that no other replica may take it
// over yet. A holder calls it before it commits (Hold's context ends on the same conditions, but
// only at its next heartbeat).
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != nil {
		return l.ended
	}
	if now := l.o.Now(); now.After(l.safeUntil()) {
		return fmt.Errorf("%w: %s not renewed since %s: another replica may take it over from %s", ErrLost, l.key,
			l.rec.RenewedAt.UTC().Format(time.RFC3339), l.rec.RenewedAt.Add(l.o.StaleAfter).UTC().Format(time.RFC3339))
	}
	return nil
}

// Renew writes the record renewed now (with the task SetTask named). A renewal another holder's
// take-over refused is ErrLost (and the lease is done: every later call answers it); another
// error (the store unreachable) leaves the lease as it was, to renew again while Check allows.
func (l *Lease) Renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != nil {
		return l.ended
	}
	now := l.o.Now()
	next := l.rec
	next.RenewedAt, next.ExpiresAt = now, now.Add(l.o.StaleAfter)
	return l.put(ctx, next)
}

// put writes next over our record by put-if-match on our ETag. l.mu is held.
func (l *Lease) put(ctx context.Context, next Record) error {
	body := next.encode()
	info, err := l.store.PutIfMatch(ctx, l.key, bytes.NewReader(body), int64(len(body)), l.etag)
	if errors.Is(err, storage.ErrPreconditionFailed) {
		// Not our ETag any more. Either another replica wrote it, or our own last write failed
		// ambiguously (applied, but we saw an error): then the record carries our token.
		cur, rerr := read(ctx, l.store, l.key)
		switch {
		case rerr == nil && cur.bad == nil && cur.rec.Token == l.token:
			info, err = l.store.PutIfMatch(ctx, l.key, bytes.NewReader(body), int64(len(body)), cur.info.ETag)
			if errors.Is(err, storage.ErrPreconditionFailed) {
				err = fmt.Errorf("%w: %s was written by another replica", ErrLost, l.key)
			}
		case rerr == nil && cur.bad == nil:
			err = fmt.Errorf("%w: %s is now held by %s", ErrLost, l.key, cur.rec.Holder)
		case rerr == nil || errors.Is(rerr, storage.ErrNotFound):
			err = fmt.Errorf("%w: %s was replaced or removed by another replica", ErrLost, l.key)
		default:
			// Which write it was is unknown: not lost yet (a later try reads again).
			err = fmt.Errorf("renewal refused, and the record unreadable now: %w", rerr)
		}
	}
	if errors.Is(err, ErrLost) {
		l.ended = err
		return err
	}
	if err != nil {
		return fmt.Errorf("lease %s: %w", l.key, err)
	}
	l.rec, l.etag = next, info.ETag
	return nil
}

// Release gives the lease up: the record written released (or, with DeleteOnRelease, deleted).
// It writes nothing over a record another holder took (ErrLost). It runs to the end even when
// ctx is cancelled (a shutting-down holder releases).
func (l *Lease) Release(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if errors.Is(l.ended, ErrReleased) {
		return nil
	}
	if l.ended != nil {
		return l.ended
	}
	now := l.o.Now()
	next := l.rec
	if l.o.DeleteOnRelease {
		// The store has no conditional delete. A renewal first proves the record ours and
		// keeps every other replica off it for StaleAfter; the delete follows at once. A
		// renewal that took so long the lease may be stale now deletes nothing (the record
		// then goes stale in its own time).
		next.RenewedAt, next.ExpiresAt = now, now.Add(l.o.StaleAfter)
		if err := l.put(ctx, next); err != nil {
			return err
		}
		if l.o.Now().After(l.safeUntil()) {
			l.ended = ErrReleased
			return fmt.Errorf("lease %s: the renewal before the delete took too long: left to go stale", l.key)
		}
		if err := l.store.Delete(ctx, l.key); err != nil {
			return fmt.Errorf("lease %s: %w", l.key, err)
		}
		l.ended = ErrReleased
		return nil
	}
	next.Released, next.RenewedAt, next.ExpiresAt = true, now, time.Time{}
	if err := l.put(ctx, next); err != nil {
		return err
	}
	l.ended = ErrReleased
	return nil
}

// Hold keeps the lease renewed every interval while the caller works, from a goroutine. After
// each renewal it runs beat (nil: none; a task record's heartbeat). It answers the work
// context, cancelled (its cause saying why) when the lease is lost — a renewal refused by
// another holder's take-over, renewals failing until the lease may be stale, or beat failing —
// and stop, which ends the renewals, cancels work and answers why the lease was lost (nil if it
// was not). stop does not release; it may be called more than once.
func (l *Lease) Hold(ctx context.Context, interval time.Duration, beat func(context.Context) error) (work context.Context, stop func() error) {
	work, cancel := context.WithCancelCause(ctx)
	var (
		quit = make(chan struct{})
		done = make(chan struct{})
		lost error
		once sync.Once
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-work.Done():
				return
			case <-tick.C:
			}
			if err := l.renewHeld(work); err != nil {
				lost = err
				cancel(err)
				return
			}
			if beat != nil {
				if err := beat(work); err != nil && work.Err() == nil {
					lost = fmt.Errorf("lease %s: heartbeat: %w", l.key, err)
					cancel(lost)
					return
				}
			}
		}
	}()
	return work, func() error {
		once.Do(func() {
			close(quit)
			<-done
			cancel(nil)
		})
		return lost
	}
}

// renewHeld is one renewal of Hold: nil when renewed, or when it failed but the lease is still
// safe (try again at the next tick); the loss otherwise. The write is not cut short by the
// work's cancellation (an interrupted conditional put leaves its outcome unknown), only by the
// point where the lease may be stale.
func (l *Lease) renewHeld(work context.Context) error {
	l.mu.Lock()
	left := l.safeUntil().Sub(l.o.Now())
	l.mu.Unlock()
	// Past the safe point, one more try still gets a little time: a renewal that lands proves
	// nobody took the lease meanwhile.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(work), max(left, l.o.SkewMargin))
	defer cancel()
	err := l.Renew(ctx)
	if err == nil || work.Err() != nil {
		return nil
	}
	if errors.Is(err, ErrLost) || errors.Is(err, ErrReleased) {
		return err
	}
	if cerr := l.Check(); cerr != nil {
		return fmt.Errorf("%w (last renewal: %v)", cerr, err)
	}
	return nil
}
