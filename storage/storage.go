package storage

import (
	"context"
	"io"
	"time"
)

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key     string
	Size    int64
	ETag    string
	ModTime time.Time
}

// MaxListLimit is the largest page List returns. It matches S3's cap so
// callers see the same paging on every backend.
const MaxListLimit = 1000

// ListOptions controls one List call.
type ListOptions struct {
	// StartAfter returns only entries (keys or common prefixes) strictly
	// greater than it. Feed ListPage.NextStartAfter back here to page.
	StartAfter string
	// Limit caps the entries (objects plus common prefixes) in one page.
	Limit int
	// Delimiter lists one level below the prefix: keys with a further "/"
	// are rolled up into CommonPrefixes (each ending in "/").
	Delimiter bool
}

// ListPage is one page of a List.
type ListPage struct {
	Objects        []ObjectInfo
	CommonPrefixes []string
	// NextStartAfter is "" when the listing is complete.
	NextStartAfter string
}

// Bucket is a flat key space of immutable-per-write objects: the one
// object-store interface of lancecat. Every backend (FS, Memory, S3)
// implements it, and every layer above (lance, registry, namespace) takes it,
// or one of its halves (Reader, Writer) when it only reads or only writes;
// none declares its own copy.
type Bucket interface {
	Reader
	Writer
}

// Reader is the read half of a Bucket.
type Reader interface {
	// Get opens the whole object. The caller must close the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error)
	// GetRange opens length bytes starting at offset; length < 0 reads to
	// the end. See the package doc for out-of-range behaviour.
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// Stat returns the object's metadata without its body.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List returns one page of keys starting with prefix, in key order.
	Lister
}

// Writer is the write half of a Bucket.
type Writer interface {
	// Put writes the object unconditionally. size -1 means unknown.
	Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error)
	// PutIfAbsent writes only if the key does not exist, else ErrExists.
	PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error)
	// PutIfMatch writes only if the current ETag equals etag, else
	// ErrPreconditionFailed (also when the object is missing).
	PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error)
	// Delete removes the object; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
