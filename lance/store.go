package lance

import (
	"context"
	"io"

	"github.com/lancecat/lancecat/storage"
)

// ObjectStore is the part of storage.Bucket the table layer needs, scoped to
// one dataset: keys are relative to the dataset root.
//
// List must return keys in byte order (storage.Bucket guarantees it): with
// the V2 naming scheme that puts the newest manifest first, which is how the
// latest version is found without listing the whole history.
type ObjectStore interface {
	Get(ctx context.Context, key string) (io.ReadCloser, storage.ObjectInfo, error)
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error)
	PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error)
	List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error)
	Stat(ctx context.Context, key string) (storage.ObjectInfo, error)
}

var _ ObjectStore = storage.Bucket(nil)
