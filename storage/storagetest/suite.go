// Package storagetest is the conformance suite every storage.Bucket
// implementation must pass, so the catalog can rely on identical semantics
// on memory, local disk and S3.
//
//	func TestFS(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Bucket { ... })
//	}
package storagetest

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

// NewBucket returns an empty bucket private to t; the suite calls it once
// per subtest, and subtests run in parallel.
type NewBucket func(t *testing.T) storage.Bucket

// Run runs the whole conformance suite against buckets from newBucket.
func Run(t *testing.T, newBucket NewBucket) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, storage.Bucket)
	}{
		{"RoundTrip", testRoundTrip},
		{"EmptyObject", testEmptyObject},
		{"UnknownSize", testUnknownSize},
		{"ShortBody", testShortBody},
		{"KeyCharacters", testKeyCharacters},
		{"InvalidKeys", testInvalidKeys},
		{"CanceledContext", testCanceledContext},
		{"GetRange", testGetRange},
		{"GetRangeEmpty", testGetRangeEmpty},
		{"ListPrefix", testListPrefix},
		{"ListDelimiter", testListDelimiter},
		{"ListStartAfter", testListStartAfter},
		{"ListPaging", testListPaging},
		{"ListAfterDelete", testListAfterDelete},
		{"ListManyKeys", testListManyKeys},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"PutIfMatch", testPutIfMatch},
		{"PutIfMatchCounter", testPutIfMatchCounter},
		{"AtomicOverwrite", testAtomicOverwrite},
		{"ConcurrentPutDelete", testConcurrentPutDelete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newBucket(t))
		})
	}
}

func put(t *testing.T, b storage.Bucket, key, body string) storage.ObjectInfo {
	t.Helper()
	info, err := b.Put(t.Context(), key, strings.NewReader(body), int64(len(body)))
	assert.NilError(t, err, "put %q", key)
	return info
}

func read(t *testing.T, b storage.Bucket, key string) (string, storage.ObjectInfo) {
	t.Helper()
	data, info, err := storage.ReadAll(t.Context(), b, key)
	assert.NilError(t, err, "read %q", key)
	return string(data), info
}

func readRange(ctx context.Context, b storage.Bucket, key string, off, n int64) (string, error) {
	rc, err := b.GetRange(ctx, key, off, n)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	return string(data), err
}

func keysOf(objs []storage.ObjectInfo) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

// errorIs is assert.ErrorIs with a readable message on mismatch.
func errorIs(t *testing.T, err, target error, msg string) {
	t.Helper()
	assert.Check(t, errors.Is(err, target), "%s: got %v, want %v", msg, err, target)
}

// body is a deterministic, non-repeating-ish payload.
func body(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// orEmpty lets DeepEqual treat nil and empty slices alike.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortStrings(s []string) { slices.Sort(s) }
