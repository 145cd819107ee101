package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// backends are every storage backend of the repo, as storage's conformance suite runs them: in
// memory, local disk, and S3 on the test MinIO (skipped without scripts/with-services.sh, failed
// under LANCECAT_REQUIRE_SERVICES=1). Each scenario gets a fresh bucket (S3: a prefix of one
// bucket per test).
func backends() []struct {
	name string
	open func(t *testing.T) func(t *testing.T) storage.Bucket
} {
	return []struct {
		name string
		open func(t *testing.T) func(t *testing.T) storage.Bucket
	}{
		{"memory", func(*testing.T) func(*testing.T) storage.Bucket {
			return func(*testing.T) storage.Bucket { return storage.NewMemory() }
		}},
		{"fs", func(*testing.T) func(*testing.T) storage.Bucket {
			return func(t *testing.T) storage.Bucket {
				b, err := storage.NewFS(t.TempDir())
				assert.NilError(t, err)
				return b
			}
		}},
		{"minio", func(t *testing.T) func(*testing.T) storage.Bucket {
			cfg, bucket := testenv.S3Bucket(t)
			return func(t *testing.T) storage.Bucket {
				b, err := storage.NewS3(t.Context(), cfg, bucket, strings.ReplaceAll(t.Name(), "/", "-"))
				assert.NilError(t, err)
				return b
			}
		}},
	}
}

const key = "_maintenance/test/lease.json"

// t0 is the tests' epoch; clocks are fixed or offset from it, never the wall clock (except where
// an object's modification time, the store's clock, is what is judged).
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock (one per replica: their skew is the difference).
type clock struct {
	mu sync.Mutex
	at time.Time
}

func newClock(at time.Time) *clock { return &clock{at: at} }
func (c *clock) Now() time.Time    { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *clock) Set(at time.Time)  { c.mu.Lock(); c.at = at; c.mu.Unlock() }

const (
	staleAfter = time.Minute
	margin     = 5 * time.Second
)

func opts(holder string, now func() time.Time) Options {
	return Options{Holder: holder, StaleAfter: staleAfter, SkewMargin: margin, Now: now}
}

func at(d time.Duration) func() time.Time { return newClock(t0.Add(d)).Now }

// heldBy asserts err is a *HeldError naming holder.
func heldBy(t *testing.T, err error, holder string) *HeldError {
	t.Helper()
	var he *HeldError
	assert.Assert(t, errors.As(err, &he), "want held by %s, got %v", holder, err)
	assert.Assert(t, errors.Is(err, ErrHeld))
	assert.Equal(t, he.Record.Holder, holder, "%v", err)
	return he
}

func readRaw(t *testing.T, b storage.Bucket) (string, storage.ObjectInfo) {
	t.Helper()
	data, info, err := storage.ReadAll(context.Background(), b, key)
	assert.NilError(t, err)
	return string(data), info
}

// TestLeaseProtocol is the lease's acceptance test, every scenario on every backend: the
// conditional writes as each store implements them are the only arbiter.
func TestLeaseProtocol(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, b storage.Bucket)
	}{
		// Of holders racing for a free lease exactly one wins; every other is told it is held,
		// by the winner.
		{"race_free", func(t *testing.T, b storage.Bucket) {
			winner := race(t, b, at(0))
			rec, _ := readRaw(t, b)
			assert.Assert(t, strings.Contains(rec, `"holder":"`+winner+`"`), rec)
		}},
		// Of holders racing to take over a stale record exactly one wins; the stale holder's
		// renewal then fails with ErrLost and its Check says so.
		{"race_stale_takeover", func(t *testing.T, b storage.Bucket) {
			dead, err := Acquire(t.Context(), b, key, opts("dead", at(0)))
			assert.NilError(t, err)
			race(t, b, at(staleAfter+margin+time.Second))
			assert.ErrorIs(t, dead.Renew(t.Context()), ErrLost)
			assert.ErrorIs(t, dead.Check(), ErrLost)
		}},
		// A released record is taken at once (no wait for staleness); the releaser cannot renew.
		{"takeover_released", func(t *testing.T, b storage.Bucket) {
			a, err := Acquire(t.Context(), b, key, opts("a", at(0)))
			assert.NilError(t, err)
			_, err = Acquire(t.Context(), b, key, opts("b", at(time.Second)))
			heldBy(t, err, "a")
			assert.NilError(t, a.Release(t.Context()))
			assert.NilError(t, a.Release(t.Context()), "a second release is a no-op")
			assert.ErrorIs(t, a.Renew(t.Context()), ErrReleased)
			_, err = Acquire(t.Context(), b, key, opts("b", at(time.Second)))
			assert.NilError(t, err)
		}},
		// A holder whose lease was taken over while it worked learns it at its next heartbeat:
		// Hold cancels its work context with ErrLost as the cause, stop answers the loss, and
		// the new holder's record is untouched.
		{"renew_after_takeover_tells_loser", func(t *testing.T, b storage.Bucket) {
			a, err := Acquire(t.Context(), b, key, opts("a", at(0)))
			assert.NilError(t, err)
			work, stop := a.Hold(t.Context(), 5*time.Millisecond, nil)
			// a renews (its clock stands still, so its lease stays fresh by its clock) until b,
			// whose clock is an hour ahead, finds it stale and takes it over.
			var bl *Lease
			for bl == nil {
				bl, err = Acquire(t.Context(), b, key, opts("b", at(time.Hour)))
				if err != nil {
					heldBy(t, err, "a") // a renewal won the race to the ETag: a is alive
				}
			}
			<-work.Done()
			assert.ErrorIs(t, context.Cause(work), ErrLost)
			assert.ErrorIs(t, stop(), ErrLost)
			assert.ErrorIs(t, a.Check(), ErrLost)
			assert.ErrorIs(t, a.Release(t.Context()), ErrLost)
			heldBy(t, Probe(t.Context(), b, key, opts("c", at(time.Hour))), "b")
			assert.NilError(t, bl.Renew(t.Context()))
		}},
		// A release by a replica that is no longer the holder writes nothing over the holder's
		// record, whether it would write it released or delete it.
		{"release_by_non_holder", func(t *testing.T, b storage.Bucket) {
			for _, del := range []bool{false, true} {
				o := opts("old", at(0))
				o.DeleteOnRelease = del
				old, err := Acquire(t.Context(), b, key, o)
				assert.NilError(t, err)
				o = opts("new", at(time.Hour))
				o.DeleteOnRelease = del
				cur, err := Acquire(t.Context(), b, key, o)
				assert.NilError(t, err)
				before, info := readRaw(t, b)
				assert.ErrorIs(t, old.Release(t.Context()), ErrLost)
				after, info2 := readRaw(t, b)
				assert.Equal(t, after, before)
				assert.Equal(t, info2.ETag, info.ETag)
				assert.NilError(t, cur.Release(t.Context()))
			}
		}},
		// An unreadable lease object (not a record: garbage, or JSON with no holder) is never
		// deleted nor taken at once: it is held while it is fresh by its modification time (the
		// store's clock) and taken over by a conditional put once it sat still past staleness.
		{"unreadable_record", func(t *testing.T, b storage.Bucket) {
			for _, garbage := range []string{"\x00garbage{", `{"released":true}`, `[1,2]`, "null"} {
				_, err := b.Put(t.Context(), key, strings.NewReader(garbage), int64(len(garbage)))
				assert.NilError(t, err)
				now := time.Now()
				he := heldBy(t, Probe(t.Context(), b, key, opts("x", func() time.Time { return now })), "")
				assert.Assert(t, strings.Contains(he.Error(), "unreadable"), he.Error())
				_, err = Acquire(t.Context(), b, key, opts("x", func() time.Time { return now }))
				heldBy(t, err, "")
				raw, _ := readRaw(t, b)
				assert.Equal(t, raw, garbage, "left as it was")

				later := now.Add(staleAfter + margin + time.Minute)
				l, err := Acquire(t.Context(), b, key, opts("x", func() time.Time { return later }))
				assert.NilError(t, err)
				assert.NilError(t, l.Release(t.Context()))
			}
		}},
		// Clock skew: a record renewed at t is held by every reader until staleAfter+margin
		// after t by the reader's clock, and its holder stops trusting it margin before
		// staleAfter by its own; so clocks up to margin apart never both hold it.
		{"skew_margin", func(t *testing.T, b storage.Bucket) {
			ca := newClock(t0)
			a, err := Acquire(t.Context(), b, key, opts("a", ca.Now))
			assert.NilError(t, err)
			_, err = Acquire(t.Context(), b, key, opts("b", at(staleAfter+margin-time.Second)))
			heldBy(t, err, "a")
			ca.Set(t0.Add(staleAfter - margin - time.Second))
			assert.NilError(t, a.Check())
			ca.Set(t0.Add(staleAfter - margin + time.Second))
			assert.ErrorIs(t, a.Check(), ErrLost, "no longer safe by its own clock")
			assert.NilError(t, a.Renew(t.Context()), "but nobody took it: a renewal lands")
			assert.NilError(t, a.Check())
			renewed := ca.Now()
			_, err = Acquire(t.Context(), b, key, opts("b", func() time.Time { return renewed.Add(staleAfter + margin - time.Second) }))
			heldBy(t, err, "a")
			_, err = Acquire(t.Context(), b, key, opts("b", func() time.Time { return renewed.Add(staleAfter + margin + time.Second) }))
			assert.NilError(t, err)
			assert.ErrorIs(t, a.Renew(t.Context()), ErrLost)
		}},
		// The records of the three users from before this package are understood: live ones
		// held (naming holder and task), released and expired ones taken.
		{"old_records", func(t *testing.T, b storage.Bucket) {
			for _, c := range oldRecords {
				_, err := b.Put(t.Context(), key, strings.NewReader(c.body), int64(len(c.body)))
				assert.NilError(t, err)
				err = Probe(t.Context(), b, key, opts("x", at(c.at)))
				if c.held {
					he := heldBy(t, err, "old")
					assert.Equal(t, he.Record.Task, c.task, c.name)
				} else {
					assert.NilError(t, err, c.name)
					l, err := Acquire(t.Context(), b, key, opts("x", at(c.at)))
					assert.NilError(t, err, c.name)
					assert.NilError(t, l.Release(t.Context()))
				}
			}
		}},
		// A conditional put the store applied but answered with an error (fault injection: a
		// timeout after the write) does not lose the lease: the next write finds the record
		// carrying its token and goes on from there.
		{"ambiguous_write", func(t *testing.T, b storage.Bucket) {
			fb := &ambiguous{Bucket: b}
			fb.failNext.Store(true) // the acquisition's put-if-absent
			l, err := Acquire(t.Context(), fb, key, opts("a", at(0)))
			assert.NilError(t, err, "the ambiguous put-if-absent was ours")
			fb.failNext.Store(true)
			assert.Assert(t, l.Renew(t.Context()) != nil, "the renewal reported failed")
			assert.NilError(t, l.Check(), "not lost")
			assert.NilError(t, l.Renew(t.Context()), "adopted its own write")
			_, err = Acquire(t.Context(), b, key, opts("b", at(time.Second)))
			heldBy(t, err, "a")
			assert.NilError(t, l.Release(t.Context()))
		}},
		// Renewals that fail for another reason than a take-over (the store unreachable; fault
		// injection) do not end the lease while it is safe, and end it (work cancelled, ErrLost)
		// once the holder's clock passes the point where another replica may take it over.
		{"renewals_fail_until_unsafe", func(t *testing.T, b storage.Bucket) {
			fb := &unreachable{Bucket: b}
			ca := newClock(t0)
			l, err := Acquire(t.Context(), fb, key, opts("a", ca.Now))
			assert.NilError(t, err)
			fb.down.Store(true)
			assert.Assert(t, l.Renew(t.Context()) != nil)
			assert.NilError(t, l.Check(), "a failed renewal alone loses nothing")
			work, stop := l.Hold(t.Context(), 5*time.Millisecond, nil)
			ca.Set(t0.Add(staleAfter - margin + time.Second))
			<-work.Done()
			assert.ErrorIs(t, context.Cause(work), ErrLost)
			assert.ErrorIs(t, stop(), ErrLost)
			fb.down.Store(false)
			assert.NilError(t, l.Release(t.Context()), "nobody took it: the release still lands")
		}},
		// DeleteOnRelease: the release removes the record (renewing it first), and the next
		// acquisition is a plain put-if-absent.
		{"delete_on_release", func(t *testing.T, b storage.Bucket) {
			o := opts("a", at(0))
			o.DeleteOnRelease = true
			l, err := Acquire(t.Context(), b, key, o)
			assert.NilError(t, err)
			assert.NilError(t, l.Release(t.Context()))
			_, err = b.Stat(t.Context(), key)
			assert.ErrorIs(t, err, storage.ErrNotFound)
			_, err = Acquire(t.Context(), b, key, opts("b", at(0)))
			assert.NilError(t, err)
		}},
		// The payload rides beside the protocol's fields and comes back in a HeldError.
		{"payload", func(t *testing.T, b storage.Bucket) {
			o := opts("a", at(0))
			o.Task = "task-1"
			o.Payload = map[string]any{"view": []string{"ns", "v"}}
			_, err := Acquire(t.Context(), b, key, o)
			assert.NilError(t, err)
			he := heldBy(t, Probe(t.Context(), b, key, opts("b", at(0))), "a")
			assert.Equal(t, he.Record.Task, "task-1")
			assert.Equal(t, string(he.Record.Payload), `{"view":["ns","v"]}`)
		}},
	}
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			open := be.open(t)
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, open(t)) })
			}
		})
	}
}

// race has 8 holders acquire the lease at once, at now: exactly one wins, and every other is
// told it is held by the winner. It answers the winner.
func race(t *testing.T, b storage.Bucket, now func() time.Time) string {
	t.Helper()
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		errs    []error
		start   = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := Acquire(context.Background(), b, key, opts(fmt.Sprint("r", i), now))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				winners = append(winners, fmt.Sprint("r", i))
			} else {
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.Equal(t, len(winners), 1, "winners %v, errors %v", winners, errs)
	for _, err := range errs {
		heldBy(t, err, winners[0])
	}
	return winners[0]
}

// oldRecords are records as the maintenance lease, the refresh lease and the index-build claim
// wrote them before this package (their shapes copied from those versions), judged at a time.
var oldRecords = []struct {
	name, body string
	at         time.Duration
	held       bool
	task       string
}{
	{"maintenance live", `{"holder":"old","expires_at":"2026-03-01T12:02:00Z"}`, time.Minute, true, ""},
	{"maintenance expired", `{"holder":"old","expires_at":"2026-03-01T12:02:00Z"}`, 2*time.Minute + margin + time.Second, false, ""},
	{"maintenance released", `{"holder":"old","expires_at":"0001-01-01T00:00:00Z"}`, 0, false, ""},
	{"refresh live", `{"view":["v"],"holder":"old","task":"t1","updated_at":"2026-03-01T12:00:00Z"}`, staleAfter, true, "t1"},
	{"refresh stale", `{"view":["v"],"holder":"old","task":"t1","updated_at":"2026-03-01T12:00:00Z"}`, staleAfter + margin + time.Second, false, ""},
	{"refresh released", `{"view":["v"],"holder":"old","task":"t1","updated_at":"2026-03-01T12:00:00Z","released":true}`, 0, false, ""},
	{"index claim live", `{"index_name":"i","branch":"b","holder":"old","task":"t2","updated_at":"2026-03-01T12:00:00.5Z"}`, 30 * time.Second, true, "t2"},
	{"index claim stale", `{"index_name":"i","holder":"old","updated_at":"2026-03-01T12:00:00Z"}`, time.Hour, false, ""},
}

// TestOldReplicasSeeNewRecords: during a rolling upgrade a replica of each user from before this
// package reads the records this one writes. Each old reader's judgement is restated here from
// its code: maintenance held while now < expires_at; the refresh lease held while not released
// and updated_at within its stale-after; the index claim held while it decodes with a holder and
// updated_at is within its stale-after (released claims are deleted, never written).
func TestOldReplicasSeeNewRecords(t *testing.T) {
	ctx := context.Background()
	b := storage.NewMemory()
	o := opts("new", at(0))
	o.Payload = map[string]any{"index_name": "i", "view": []string{"v"}}
	l, err := Acquire(ctx, b, key, o)
	assert.NilError(t, err)
	l.SetTask("t9")
	assert.NilError(t, l.Renew(ctx))
	live, _ := readRaw(t, b)
	assert.NilError(t, l.Release(ctx))
	released, _ := readRaw(t, b)

	type maint struct {
		Holder    string    `json:"holder"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	type refresh struct {
		View      []string  `json:"view"`
		Holder    string    `json:"holder"`
		Task      string    `json:"task"`
		UpdatedAt time.Time `json:"updated_at"`
		Released  bool      `json:"released"`
	}
	type claim struct {
		Index     string    `json:"index_name"`
		Holder    string    `json:"holder"`
		Task      string    `json:"task"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	for _, c := range []struct {
		name string
		now  time.Duration
		body string
		held bool
	}{
		{"live", 10 * time.Second, live, true},
		{"stale", time.Hour, live, false},
		{"released", 0, released, false},
	} {
		now := t0.Add(c.now)
		var m maint
		assert.NilError(t, json.Unmarshal([]byte(c.body), &m))
		assert.Equal(t, m.Holder == "new" && now.Before(m.ExpiresAt), c.held, "old maintenance, %s: %s", c.name, c.body)
		var r refresh
		assert.NilError(t, json.Unmarshal([]byte(c.body), &r))
		assert.Equal(t, !r.Released && now.Sub(r.UpdatedAt) < staleAfter, c.held, "old refresh, %s: %s", c.name, c.body)
		assert.Equal(t, r.Task, "t9")
		assert.DeepEqual(t, r.View, []string{"v"})
		if c.name != "released" {
			var cl claim
			assert.NilError(t, json.Unmarshal([]byte(c.body), &cl))
			assert.Equal(t, cl.Holder != "" && now.Sub(cl.UpdatedAt) <= staleAfter, c.held, "old index claim, %s: %s", c.name, c.body)
			assert.Equal(t, cl.Index, "i")
		}
	}
}

// TestPayloadReservedKeys: a payload may not shadow the protocol's fields, and must be an object.
func TestPayloadReservedKeys(t *testing.T) {
	for _, p := range []any{map[string]any{"holder": "x"}, map[string]any{"updated_at": 1}, []int{1}, "s"} {
		o := opts("a", at(0))
		o.Payload = p
		_, err := Acquire(context.Background(), storage.NewMemory(), key, o)
		assert.Assert(t, err != nil, "%v", p)
	}
}

// ambiguous is a fault-injecting Bucket (a fake, for fault injection only): with failNext set,
// its next conditional put is applied and then answered with an error, as a timeout after the
// store wrote it would be.
type ambiguous struct {
	storage.Bucket
	failNext atomic.Bool
}

var errAmbiguous = errors.New("injected: timeout after the write")

func (a *ambiguous) PutIfAbsent(ctx context.Context, k string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	info, err := a.Bucket.PutIfAbsent(ctx, k, r, size)
	if err == nil && a.failNext.CompareAndSwap(true, false) {
		return storage.ObjectInfo{}, errAmbiguous
	}
	return info, err
}

func (a *ambiguous) PutIfMatch(ctx context.Context, k string, r io.Reader, size int64, etag string) (storage.ObjectInfo, error) {
	info, err := a.Bucket.PutIfMatch(ctx, k, r, size, etag)
	if err == nil && a.failNext.CompareAndSwap(true, false) {
		return storage.ObjectInfo{}, errAmbiguous
	}
	return info, err
}

// unreachable is a fault-injecting Bucket (a fake, for fault injection only): while down, its
// conditional puts fail without writing, as a store out of reach does.
type unreachable struct {
	storage.Bucket
	down atomic.Bool
}

var errUnreachable = errors.New("injected: store unreachable")

func (u *unreachable) PutIfMatch(ctx context.Context, k string, r io.Reader, size int64, etag string) (storage.ObjectInfo, error) {
	if u.down.Load() {
		return storage.ObjectInfo{}, errUnreachable
	}
	return u.Bucket.PutIfMatch(ctx, k, r, size, etag)
}

// FuzzDecode: any bytes decode to a record or errUnreadable, never a panic; a record decoded
// encodes to bytes that decode to the same record.
func FuzzDecode(f *testing.F) {
	for _, c := range oldRecords {
		f.Add([]byte(c.body))
	}
	f.Add([]byte(`{"holder":"a","token":"x","acquired_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:01:00Z","view":["a"]}`))
	f.Add([]byte("\x00garbage"))
	f.Add([]byte(`{"holder":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := decode(data)
		if err != nil {
			assert.ErrorIs(t, err, errUnreadable)
			return
		}
		again, err := decode(rec.encode())
		assert.NilError(t, err)
		assert.Equal(t, string(again.encode()), string(rec.encode()))
	})
}
