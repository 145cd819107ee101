package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
)

// sub is the part of a bucket under prefix (which ends in "/"), with keys
// relative to it. Keys are validated as keys of the view (a view is a bucket
// of its own: no "../" out of it, no reserved directory at its root) before
// the bucket validates the joined key.
type sub struct {
	inner  Bucket
	prefix string
}

// Sub scopes b to the keys under prefix ("tables/t1/", "tree/feature/"),
// with keys relative to it: how a table's directory, or a branch's, is opened
// as a dataset of its own. A missing trailing slash is added; a Sub of a Sub
// is one view with the prefixes joined.
func Sub(b Bucket, prefix string) Bucket {
	if prefix == "" {
		return b
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if s, ok := b.(*sub); ok {
		return &sub{inner: s.inner, prefix: s.prefix + prefix}
	}
	return &sub{inner: b, prefix: prefix}
}

func (s *sub) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return nil, ObjectInfo{}, err
	}
	rc, info, err := s.inner.Get(ctx, s.prefix+key)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return rc, info, err
}

// OpenLocal opens key's file when the bucket under the view is local (FS.OpenLocal);
// ErrNotLocal otherwise.
func (s *sub) OpenLocal(key string) (*os.File, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if l, ok := s.inner.(interface {
		OpenLocal(string) (*os.File, error)
	}); ok {
		return l.OpenLocal(s.prefix + key)
	}
	return nil, ErrNotLocal
}

// ErrNotLocal: the bucket has no local files to open.
var ErrNotLocal = errors.New("storage: not a local bucket")

func (s *sub) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	return s.inner.GetRange(ctx, s.prefix+key, offset, length)
}

func (s *sub) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.inner.Put(ctx, s.prefix+key, r, size)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *sub) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.inner.PutIfAbsent(ctx, s.prefix+key, r, size)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *sub) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.inner.PutIfMatch(ctx, s.prefix+key, r, size, etag)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *sub) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.inner.Stat(ctx, s.prefix+key)
	info.Key = strings.TrimPrefix(info.Key, s.prefix)
	return info, err
}

func (s *sub) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	return s.inner.Delete(ctx, s.prefix+key)
}

func (s *sub) List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error) {
	if err := validatePrefix(prefix); err != nil {
		return ListPage{}, err
	}
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
