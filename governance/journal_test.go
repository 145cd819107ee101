package governance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

// readAll pages through the journal from cursor with the given page size.
func readAll(t *testing.T, e *Events, cursor string, page int) ([]Event, string) {
	t.Helper()
	var all []Event
	for {
		evs, next, reset, err := e.Read(context.Background(), cursor, page)
		assert.NilError(t, err)
		assert.Assert(t, !reset || cursor == "", "no reset while nothing was pruned")
		all = append(all, evs...)
		if len(evs) == 0 {
			return all, next
		}
		cursor = next
	}
}

func journalBuckets(t *testing.T) map[string]storage.Bucket {
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	return map[string]storage.Bucket{"memory": storage.NewMemory(), "fs": fs}
}

// TestJournalOneStreamAcrossReplicas: two replicas emitting concurrently onto one control root
// give one stream: every event exactly once, in the same order whichever replica is read, each
// emitter's events in its order, cursors valid on either replica and after a restart (issue 19:
// events are replica-wide and durable).
func TestJournalOneStreamAcrossReplicas(t *testing.T) {
	for name, bucket := range journalBuckets(t) {
		t.Run(name, func(t *testing.T) {
			a := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
			b := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
			const emitters, each = 8, 40
			var wg sync.WaitGroup
			for g := range emitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					replica := a
					if g%2 == 1 {
						replica = b
					}
					for i := range each {
						replica.Emit(Event{Type: "test", At: time.Now(), Object: fmt.Sprintf("g%d", g), Attributes: map[string]string{"i": strconv.Itoa(i)}})
					}
				}()
			}
			wg.Wait()
			ctx := context.Background()
			assert.NilError(t, a.Journal().Flush(ctx))
			assert.NilError(t, b.Journal().Flush(ctx))

			fromA, endA := readAll(t, a, "", 37)
			fromB, endB := readAll(t, b, "", 1000)
			assert.Equal(t, len(fromA), emitters*each)
			assert.DeepEqual(t, fromA, fromB)
			assert.Equal(t, endA, endB)
			last := map[string]int{}
			seen := map[string]bool{}
			for _, ev := range fromA {
				key := ev.Object + "/" + ev.Attributes["i"]
				assert.Assert(t, !seen[key], "event %s delivered twice", key)
				seen[key] = true
				i, _ := strconv.Atoi(ev.Attributes["i"])
				if prev, ok := last[ev.Object]; ok {
					assert.Assert(t, i > prev, "emitter %s out of order: %d after %d", ev.Object, i, prev)
				}
				last[ev.Object] = i
			}

			// A cursor from the middle, read on the other replica, continues exactly there.
			mid := fromA[100].Cursor
			rest, _ := readAll(t, b, mid, 50)
			assert.DeepEqual(t, rest, fromA[101:])

			// A restarted replica (a new journal on the same root) appends after the rest, and the
			// old end cursor reads just the new event.
			a.Journal().Close()
			b.Journal().Close()
			c := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
			defer c.Journal().Close()
			c.Emit(Event{Type: "after-restart", At: time.Now()})
			evs, _, reset, err := c.Read(ctx, endA, 10)
			assert.NilError(t, err)
			assert.Assert(t, !reset)
			assert.Equal(t, len(evs), 1)
			assert.Equal(t, evs[0].Type, "after-restart")
		})
	}
}

// TestJournalCursors: bad cursors are 400; a ring cursor (a release before the journal) reads
// from the oldest with reset; a cursor whose segment was pruned resets.
func TestJournalCursors(t *testing.T) {
	bucket := storage.NewMemory()
	j := NewJournal(bucket, 3, nil)
	defer j.Close()
	var skew atomic.Int64 // how far the journal's clock runs ahead (set before any event: no race)
	j.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := NewEvents(4).WithJournal(j)
	ctx := context.Background()
	evs, next, reset, err := e.Read(ctx, "", 10)
	assert.NilError(t, err)
	assert.Assert(t, len(evs) == 0 && !reset)
	for i := range 3 {
		e.Emit(Event{Type: "t" + strconv.Itoa(i)})
		assert.NilError(t, j.Flush(ctx)) // one segment each
	}
	evs, _, _, err = e.Read(ctx, next, 10)
	assert.NilError(t, err)
	assert.Equal(t, len(evs), 3, "the empty journal's cursor reads what came after")
	first := evs[0].Cursor

	for _, bad := range []string{"junk", "j1", "jx.0", "j1.-5"} {
		_, _, _, err := e.Read(ctx, bad, 10)
		assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), "%q: %v", bad, err)
	}
	evs, _, reset, err = e.Read(ctx, "0badcafe.7", 10)
	assert.NilError(t, err)
	assert.Assert(t, reset)
	assert.Equal(t, len(evs), 3)

	// Two hours later, three more segments: the first ones are past retention and pruned.
	skew.Store(int64(2 * time.Hour))
	for i := range 3 {
		e.Emit(Event{Type: "u" + strconv.Itoa(i)})
		assert.NilError(t, j.Flush(ctx))
	}
	evs, _, reset, err = e.Read(ctx, first, 10)
	assert.NilError(t, err)
	assert.Assert(t, reset, "the cursor's segment was pruned")
	assert.Assert(t, len(evs) >= 3)
	assert.Equal(t, evs[len(evs)-1].Type, "u2")
}

// failingPuts is a fake for fault injection: its puts fail while failing is set.
type failingPuts struct {
	storage.Bucket
	failing atomic.Bool
}

func (f *failingPuts) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if f.failing.Load() {
		return storage.ObjectInfo{}, errors.New("injected put failure")
	}
	return f.Bucket.PutIfAbsent(ctx, key, r, size)
}

// TestJournalSurvivesFailingPuts: while the control root refuses writes, events stay queued in
// order; once it answers they are written, none lost or doubled.
func TestJournalSurvivesFailingPuts(t *testing.T) {
	bucket := &failingPuts{Bucket: storage.NewMemory()}
	j := NewJournal(bucket, 0, nil)
	defer j.Close()
	e := NewEvents(4).WithJournal(j)
	ctx := context.Background()
	bucket.failing.Store(true)
	for i := range 5 {
		e.Emit(Event{Type: "t", Attributes: map[string]string{"i": strconv.Itoa(i)}})
	}
	assert.Assert(t, j.Flush(ctx) != nil)
	_, _, _, err := e.Read(ctx, "", 10)
	assert.Assert(t, errors.Is(err, nserr.ErrServiceUnavailable), "%v", err)
	bucket.failing.Store(false)
	evs, _ := readAll(t, e, "", 10)
	assert.Equal(t, len(evs), 5)
	for i, ev := range evs {
		assert.Equal(t, ev.Attributes["i"], strconv.Itoa(i))
	}
}

// TestJournalIgnoresAHostileTopSegment: an object named as the largest sequence, put on the
// control root by someone with write access to it, is not a segment. Were it taken for one, the
// next append would wrap to sequence 0 and write segments no listing reads: every later event
// would be lost to readers.
func TestJournalIgnoresAHostileTopSegment(t *testing.T) {
	for name, bucket := range journalBuckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
			defer e.Journal().Close()
			e.Emit(Event{Type: EventPolicySet, Object: "before"})
			assert.NilError(t, e.Journal().Flush(ctx))
			for _, key := range []string{JournalPrefix + "18446744073709551615.json", JournalPrefix + "10000000000000000001.json"} {
				_, err := bucket.Put(ctx, key, strings.NewReader(`[{"type":"forged"}]`), -1)
				assert.NilError(t, err)
			}
			e.Emit(Event{Type: EventPolicySet, Object: "after"})
			assert.NilError(t, e.Journal().Flush(ctx))
			all, _ := readAll(t, e, "", 10)
			var objects []string
			for _, ev := range all {
				objects = append(objects, ev.Object)
			}
			assert.DeepEqual(t, objects, []string{"before", "after"})
			_, _, _, err := e.Read(ctx, "j18446744073709551615.0", 10)
			assert.ErrorContains(t, err, "not one this catalog issued")
		})
	}
}

// lostAnswers is a fake for fault injection: the next put lands, then answers lose (a timeout or
// a reset after the store wrote it) or answer "exists" (the S3 client's own retry of a put that
// had landed).
type lostAnswers struct {
	storage.Bucket
	lose atomic.Int32 // puts still to land with a lost answer
	err  error
}

func (f *lostAnswers) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	info, err := f.Bucket.PutIfAbsent(ctx, key, r, size)
	if err == nil && f.lose.Add(-1) >= 0 {
		return storage.ObjectInfo{}, f.err
	}
	return info, err
}

// TestJournalPutWithALostAnswerIsWrittenOnce is the interleaving the fault campaign (issue 36,
// scripts/faults) found: a segment put landed, its answer was lost, and the retried flush wrote the
// same batch again as the next segment, so the journal held those changes twice. The writer now
// recognises its own segment by the batch's token.
func TestJournalPutWithALostAnswerIsWrittenOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"answer lost", errors.New("injected: connection reset after the put landed")},
		{"client retry sees exists", storage.ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := &lostAnswers{Bucket: storage.NewMemory(), err: tc.err}
			j := NewJournal(bucket, 0, nil)
			defer j.Close()
			e := NewEvents(16).WithJournal(j)
			ctx := context.Background()
			e.Emit(Event{Type: "t", Attributes: map[string]string{"i": "0"}})
			assert.NilError(t, j.Flush(ctx))
			bucket.lose.Store(1)
			for i := 1; i <= 3; i++ {
				e.Emit(Event{Type: "t", Attributes: map[string]string{"i": strconv.Itoa(i)}})
			}
			if err := j.Flush(ctx); err != nil { // the lost answer fails this flush…
				assert.NilError(t, j.Flush(ctx)) // …and the next recognises the segment as written
			}
			e.Emit(Event{Type: "t", Attributes: map[string]string{"i": "4"}})
			assert.NilError(t, j.Flush(ctx))
			evs, _ := readAll(t, e, "", 10)
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Attributes["i"])
			}
			assert.DeepEqual(t, got, []string{"0", "1", "2", "3", "4"})
		})
	}
}
