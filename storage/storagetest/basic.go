package storagetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

func testRoundTrip(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const key = "dir/sub/obj.txt"

	info := put(t, b, key, "hello")
	assert.Check(t, is.Equal(info.Key, key))
	assert.Check(t, is.Equal(info.Size, int64(5)))
	assert.Check(t, info.ETag != "", "Put must return an ETag")

	st, err := b.Stat(ctx, key)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Key, key))
	assert.Check(t, is.Equal(st.Size, int64(5)))
	assert.Check(t, is.Equal(st.ETag, info.ETag), "Stat ETag must equal Put ETag")
	assert.Check(t, !st.ModTime.IsZero())

	got, gi := read(t, b, key)
	assert.Check(t, is.Equal(got, "hello"))
	assert.Check(t, is.Equal(gi.ETag, info.ETag), "Get ETag must equal Put ETag")
	assert.Check(t, is.Equal(gi.Size, int64(5)))

	// An overwrite with different content must change the ETag, however
	// quickly it follows (no mtime-granularity collisions).
	info2 := put(t, b, key, "world")
	assert.Check(t, info2.ETag != info.ETag, "ETag unchanged after overwrite")
	got, gi = read(t, b, key)
	assert.Check(t, is.Equal(got, "world"))
	assert.Check(t, is.Equal(gi.ETag, info2.ETag))

	assert.NilError(t, b.Delete(ctx, key))
	_, err = b.Stat(ctx, key)
	errorIs(t, err, storage.ErrNotFound, "Stat after Delete")
	_, _, err = b.Get(ctx, key)
	errorIs(t, err, storage.ErrNotFound, "Get after Delete")
	_, err = b.GetRange(ctx, key, 0, 1)
	errorIs(t, err, storage.ErrNotFound, "GetRange after Delete")
	assert.NilError(t, b.Delete(ctx, key), "Delete must be idempotent")
	assert.NilError(t, b.Delete(ctx, "never/existed"), "Delete of a missing key")

	// Parent "directories" of a key are not objects.
	put(t, b, "p/q/r", "x")
	_, err = b.Stat(ctx, "p/q")
	errorIs(t, err, storage.ErrNotFound, "Stat of a key's parent")
	assert.NilError(t, b.Delete(ctx, "p/q"), "Delete of a key's parent")
	got, _ = read(t, b, "p/q/r")
	assert.Check(t, is.Equal(got, "x"), "Delete of a parent must not touch children")
}

func testEmptyObject(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	for _, tc := range []struct {
		key  string
		size int64
		put  func(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error)
	}{
		{"empty/known", 0, b.Put},
		{"empty/unknown", -1, b.Put},
		{"empty/absent", 0, b.PutIfAbsent},
	} {
		info, err := tc.put(ctx, tc.key, strings.NewReader(""), tc.size)
		assert.NilError(t, err, tc.key)
		assert.Check(t, is.Equal(info.Size, int64(0)), tc.key)
		assert.Check(t, info.ETag != "", tc.key)
		got, gi := read(t, b, tc.key)
		assert.Check(t, is.Equal(got, ""), tc.key)
		assert.Check(t, is.Equal(gi.Size, int64(0)), tc.key)
		assert.Check(t, is.Equal(gi.ETag, info.ETag), tc.key)
	}
	objs, err := storage.ListAll(ctx, b, "empty/")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(keysOf(objs), []string{"empty/absent", "empty/known", "empty/unknown"}))
}

// testUnknownSize streams bodies of unknown length through a pipe (so the
// backend cannot seek or learn the size), including one large enough to
// need a multipart upload on S3, for Put and both conditional puts.
func testUnknownSize(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		n    int
		put  func(key string, r io.Reader) (storage.ObjectInfo, error)
	}{
		{"Put", 3 << 20, func(k string, r io.Reader) (storage.ObjectInfo, error) { return b.Put(ctx, k, r, -1) }},
		{"PutLarge", 17 << 20, func(k string, r io.Reader) (storage.ObjectInfo, error) { return b.Put(ctx, k, r, -1) }},
		{"PutIfAbsentLarge", 17 << 20, func(k string, r io.Reader) (storage.ObjectInfo, error) { return b.PutIfAbsent(ctx, k, r, -1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "stream/" + tc.name
			data := body(tc.n, byte(tc.n))
			info, err := tc.put(key, chunkedPipe(data))
			assert.NilError(t, err)
			assert.Check(t, is.Equal(info.Size, int64(tc.n)))
			got, gi := read(t, b, key)
			assert.Check(t, sha256.Sum256([]byte(got)) == sha256.Sum256(data), "content mismatch")
			assert.Check(t, is.Equal(gi.ETag, info.ETag))
		})
	}
	t.Run("PutIfMatch", func(t *testing.T) {
		key := "stream/PutIfMatch"
		old := put(t, b, key, "v1")
		data := body(17<<20, 7)
		info, err := b.PutIfMatch(ctx, key, chunkedPipe(data), -1, old.ETag)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(info.Size, int64(len(data))))
		_, err = b.PutIfMatch(ctx, key, chunkedPipe(data), -1, old.ETag)
		errorIs(t, err, storage.ErrPreconditionFailed, "second PutIfMatch with the old ETag")
	})
}

// chunkedPipe feeds data through an io.Pipe in odd-sized writes.
func chunkedPipe(data []byte) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for d := data; len(d) > 0; {
			n := min(len(d), 100_003)
			if _, err := pw.Write(d[:n]); err != nil {
				return
			}
			d = d[n:]
		}
		pw.Close()
	}()
	return pr
}

// testShortBody: a body shorter than the declared size must fail and must
// not leave a truncated object behind.
func testShortBody(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	_, err := b.Put(ctx, "short", strings.NewReader("abc"), 10)
	assert.Check(t, err != nil, "Put with a short body must fail")
	_, err = b.Stat(ctx, "short")
	errorIs(t, err, storage.ErrNotFound, "Stat after failed Put")

	put(t, b, "short", "original")
	_, err = b.Put(ctx, "short", strings.NewReader("abc"), 10)
	assert.Check(t, err != nil, "overwrite with a short body must fail")
	got, _ := read(t, b, "short")
	assert.Check(t, is.Equal(got, "original"), "failed overwrite must leave the old object")

	// A longer body is cut at the declared size.
	info, err := b.Put(ctx, "long", strings.NewReader("abcdef"), 3)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(info.Size, int64(3)))
	got, _ = read(t, b, "long")
	assert.Check(t, is.Equal(got, "abc"))
}

// testKeyCharacters: keys that need escaping on S3 or sort around "/".
func testKeyCharacters(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	keys := []string{
		"chars/sp ace/x",
		"chars/ünï cødé/ß",
		"chars/q?a=b&c=d#frag",
		"chars/pct%20plus+",
		"chars/.hidden",
		"chars/...",
		"chars/a-b",
		"chars/a.b",
		"chars/a/b",
		"chars/a0",
		"chars/~tilde*star'quote\"",
	}
	for _, k := range keys {
		put(t, b, k, k)
	}
	for _, k := range keys {
		got, _ := read(t, b, k)
		assert.Check(t, is.Equal(got, k))
	}
	objs, err := storage.ListAll(ctx, b, "chars/")
	assert.NilError(t, err)
	want := append([]string(nil), keys...)
	sortStrings(want)
	assert.Check(t, is.DeepEqual(keysOf(objs), want))
}

func testInvalidKeys(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	bad := []string{
		"", "/abs", "a//b", "a/", "/", ".", "..", "./a", "a/.", "a/./b", "a/../b", "../escape",
		"a\\b", "a\x00b", "a\nb", "\xff\xfe", ".lancecat-tmp/x", ".lancecat-tmp",
		strings.Repeat("k", storage.MaxKeyLen+1),
	}
	for _, key := range bad {
		_, _, err := b.Get(ctx, key)
		errorIs(t, err, storage.ErrInvalidKey, "Get "+key)
		_, err = b.GetRange(ctx, key, 0, 1)
		errorIs(t, err, storage.ErrInvalidKey, "GetRange "+key)
		_, err = b.Stat(ctx, key)
		errorIs(t, err, storage.ErrInvalidKey, "Stat "+key)
		_, err = b.Put(ctx, key, strings.NewReader("x"), 1)
		errorIs(t, err, storage.ErrInvalidKey, "Put "+key)
		_, err = b.PutIfAbsent(ctx, key, strings.NewReader("x"), 1)
		errorIs(t, err, storage.ErrInvalidKey, "PutIfAbsent "+key)
		_, err = b.PutIfMatch(ctx, key, strings.NewReader("x"), 1, "etag")
		errorIs(t, err, storage.ErrInvalidKey, "PutIfMatch "+key)
		errorIs(t, b.Delete(ctx, key), storage.ErrInvalidKey, "Delete "+key)
	}
	for _, prefix := range []string{"/", "/a", "../", "a//", "a/../", "./", "a/.", "a/..", ".", "..", "a\\", ".lancecat-tmp/"} {
		_, err := b.List(ctx, prefix, storage.ListOptions{})
		errorIs(t, err, storage.ErrInvalidKey, "List "+prefix)
	}
	// Prefixes may end in "/" or in a partial segment.
	for _, prefix := range []string{"", "a", "a/", "a/b", "a/.h", "a/..h", ".lancecat"} {
		_, err := b.List(ctx, prefix, storage.ListOptions{})
		assert.Check(t, err, "List %q", prefix)
	}
	// Long keys with long segments work.
	long := strings.Repeat("k", 200) + "/" + strings.Repeat("k", 200)
	put(t, b, long, "x")
	got, _ := read(t, b, long)
	assert.Check(t, is.Equal(got, "x"))
}

func testCanceledContext(t *testing.T, b storage.Bucket) {
	put(t, b, "k", "v")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := b.Get(ctx, "k")
	assert.Check(t, err != nil, "Get")
	_, err = b.Put(ctx, "k2", bytes.NewReader([]byte("v")), 1)
	assert.Check(t, err != nil, "Put")
	_, err = b.List(ctx, "", storage.ListOptions{})
	assert.Check(t, err != nil, "List")
	_, err = b.Stat(t.Context(), "k2")
	errorIs(t, err, storage.ErrNotFound, "canceled Put must not write")
}
