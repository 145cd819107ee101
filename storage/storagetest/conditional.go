package storagetest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

func testPutIfAbsent(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	info, err := b.PutIfAbsent(ctx, "once", strings.NewReader("first"), 5)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(info.Size, int64(5)))
	assert.Check(t, info.ETag != "")

	_, err = b.PutIfAbsent(ctx, "once", strings.NewReader("second"), 6)
	errorIs(t, err, storage.ErrExists, "PutIfAbsent on an existing key")
	got, gi := read(t, b, "once")
	assert.Check(t, is.Equal(got, "first"), "loser must not overwrite")
	assert.Check(t, is.Equal(gi.ETag, info.ETag))

	// Identical content still loses: existence, not content, decides.
	_, err = b.PutIfAbsent(ctx, "once", strings.NewReader("first"), 5)
	errorIs(t, err, storage.ErrExists, "PutIfAbsent with identical content")

	assert.NilError(t, b.Delete(ctx, "once"))
	_, err = b.PutIfAbsent(ctx, "once", strings.NewReader("third"), 5)
	assert.NilError(t, err, "PutIfAbsent after Delete")
	got, _ = read(t, b, "once")
	assert.Check(t, is.Equal(got, "third"))
}

// testPutIfAbsentRace: many writers, one key, exactly one winner per round,
// and the stored object is the winner's.
func testPutIfAbsentRace(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const writers, rounds = 8, 5
	const key = "race/commit"
	for round := range rounds {
		assert.NilError(t, b.Delete(ctx, key))
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
			start   = make(chan struct{})
		)
		for w := range writers {
			wg.Go(func() {
				val := fmt.Sprintf("round %d writer %d", round, w)
				<-start
				_, err := b.PutIfAbsent(ctx, key, strings.NewReader(val), int64(len(val)))
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, val)
					mu.Unlock()
				case !errors.Is(err, storage.ErrExists):
					t.Errorf("round %d writer %d: %v", round, w, err)
				}
			})
		}
		close(start)
		wg.Wait()
		assert.Assert(t, is.Len(winners, 1), "round %d: winners %q", round, winners)
		got, _ := read(t, b, key)
		assert.Check(t, is.Equal(got, winners[0]), "round %d", round)
	}
}

func testPutIfMatch(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	v1 := put(t, b, "cas", "v1")

	v2, err := b.PutIfMatch(ctx, "cas", strings.NewReader("v2"), 2, v1.ETag)
	assert.NilError(t, err)
	assert.Check(t, v2.ETag != v1.ETag)
	st, err := b.Stat(ctx, "cas")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.ETag, v2.ETag), "Stat must see PutIfMatch's ETag")

	_, err = b.PutIfMatch(ctx, "cas", strings.NewReader("v3"), 2, v1.ETag)
	errorIs(t, err, storage.ErrPreconditionFailed, "stale ETag")
	got, _ := read(t, b, "cas")
	assert.Check(t, is.Equal(got, "v2"), "failed PutIfMatch must not write")

	// A plain Put in between also invalidates the ETag a reader holds.
	v3 := put(t, b, "cas", "v3")
	_, err = b.PutIfMatch(ctx, "cas", strings.NewReader("v4"), 2, v2.ETag)
	errorIs(t, err, storage.ErrPreconditionFailed, "ETag overwritten by Put")
	_, err = b.PutIfMatch(ctx, "cas", strings.NewReader("v4"), 2, v3.ETag)
	assert.NilError(t, err)

	for _, etag := range []string{"", "*", "0123456789abcdef0123456789abcdef"} {
		_, err = b.PutIfMatch(ctx, "cas", strings.NewReader("x"), 1, etag)
		errorIs(t, err, storage.ErrPreconditionFailed, fmt.Sprintf("ETag %q", etag))
	}

	_, err = b.PutIfMatch(ctx, "missing", strings.NewReader("x"), 1, v1.ETag)
	errorIs(t, err, storage.ErrPreconditionFailed, "missing key")
	_, err = b.Stat(ctx, "missing")
	errorIs(t, err, storage.ErrNotFound, "PutIfMatch on a missing key must not create it")

	cur, err := b.Stat(ctx, "cas")
	assert.NilError(t, err)
	assert.NilError(t, b.Delete(ctx, "cas"))
	_, err = b.PutIfMatch(ctx, "cas", strings.NewReader("x"), 1, cur.ETag)
	errorIs(t, err, storage.ErrPreconditionFailed, "deleted key")
}

// testPutIfMatchCounter: concurrent read-modify-write loops must not lose
// a single increment.
func testPutIfMatchCounter(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const workers, increments = 8, 50
	const key = "counter"
	put(t, b, key, "0")

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range increments {
				for attempt := 0; ; attempt++ {
					if attempt > 10_000 {
						t.Errorf("worker %d: no progress", w)
						return
					}
					data, info, err := storage.ReadAll(ctx, b, key)
					if err != nil {
						t.Errorf("worker %d: read: %v", w, err)
						return
					}
					n, err := strconv.Atoi(string(data))
					if err != nil {
						t.Errorf("worker %d: %q: %v", w, data, err)
						return
					}
					next := strconv.Itoa(n + 1)
					_, err = b.PutIfMatch(ctx, key, strings.NewReader(next), int64(len(next)), info.ETag)
					if err == nil {
						break
					}
					if !errors.Is(err, storage.ErrPreconditionFailed) {
						t.Errorf("worker %d: PutIfMatch: %v", w, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	got, _ := read(t, b, key)
	assert.Check(t, is.Equal(got, strconv.Itoa(workers*increments)))
}
