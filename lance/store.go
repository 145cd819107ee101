package lance

import (
	"context"
	"fmt"
	"io"
	"strings"

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
	// Delete removes key; a missing key is not an error. Only cleanup,
	// branch deletion and version deletion use it.
	Delete(ctx context.Context, key string) error
}

var _ ObjectStore = storage.Bucket(nil)

// subStore is the part of a store under prefix (which ends in "/"), with
// keys relative to it: how a branch's directory (tree/<name>/) is opened as
// a dataset of its own.
type subStore struct {
	inner  ObjectStore
	prefix string
}

// SubStore scopes store to the keys under prefix ("tree/feature/"). A
// missing trailing slash is added.
func SubStore(store ObjectStore, prefix string) ObjectStore {
	if prefix == "" {
		return store
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if s, ok := store.(*subStore); ok {
		return &subStore{inner: s.inner, prefix: s.prefix + prefix}
	}
	return &subStore{inner: store, prefix: prefix}
}

func (s *subStore) Get(ctx context.Context, key string) (io.ReadCloser, storage.ObjectInfo, error) {
	rc, info, err := s.inner.Get(ctx, s.prefix+key)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return rc, info, err
}

func (s *subStore) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	return s.inner.GetRange(ctx, s.prefix+key, offset, length)
}

func (s *subStore) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	info, err := s.inner.Put(ctx, s.prefix+key, r, size)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *subStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	info, err := s.inner.PutIfAbsent(ctx, s.prefix+key, r, size)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *subStore) Stat(ctx context.Context, key string) (storage.ObjectInfo, error) {
	info, err := s.inner.Stat(ctx, s.prefix+key)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *subStore) Delete(ctx context.Context, key string) error {
	return s.inner.Delete(ctx, s.prefix+key)
}

func (s *subStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	if opts.StartAfter != "" {
		opts.StartAfter = s.prefix + opts.StartAfter
	}
	page, err := s.inner.List(ctx, s.prefix+prefix, opts)
	if err != nil {
		return page, err
	}
	for i := range page.Objects {
		page.Objects[i].Key = strings.TrimPrefix(page.Objects[i].Key, s.prefix)
	}
	for i := range page.CommonPrefixes {
		page.CommonPrefixes[i] = strings.TrimPrefix(page.CommonPrefixes[i], s.prefix)
	}
	if page.NextStartAfter != "" {
		page.NextStartAfter = strings.TrimPrefix(page.NextStartAfter, s.prefix)
	}
	return page, nil
}

// listAll lists every key under prefix (recursively), in key order.
func listAll(ctx context.Context, store ObjectStore, prefix string) ([]storage.ObjectInfo, error) {
	out, err := storage.ListAll(ctx, store, prefix)
	if err != nil {
		return nil, fmt.Errorf("lance: list %s: %w", prefix, err)
	}
	return out, nil
}

// maxTransactionFileSize bounds reads of .txn files; a transaction listing
// every fragment of a huge table is still far below it.
const maxTransactionFileSize = 256 << 20

// readObject reads a whole object of at most limit bytes.
func readObject(ctx context.Context, store ObjectStore, key string, limit int64) ([]byte, error) {
	rc, info, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size > limit {
		return nil, fmt.Errorf("lance: %s is %d bytes, over the %d-byte limit", key, info.Size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("lance: read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("lance: %s is over the %d-byte limit", key, limit)
	}
	return data, nil
}
