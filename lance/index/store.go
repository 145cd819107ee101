package index

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lancecat/lancecat/storage"
)

// Store is the index directory _indices/<uuid>/ of one index segment.
type Store interface {
	// Open returns random access to the named file.
	Open(ctx context.Context, name string) (ReaderAt, error)
	// Put writes the named file.
	Put(ctx context.Context, name string, r io.Reader, size int64) error
}

// ReaderAt is random access to one index file.
type ReaderAt interface {
	Size() int64
	ReadRange(ctx context.Context, off, n int64) ([]byte, error)
	Close() error
}

// File is one file an index wrote, as IndexMetadata.files records it.
type File struct {
	Path string
	Size int64
}

// BucketStore is the Store of directory dir ("_indices/<uuid>/") of a
// bucket rooted at the dataset.
func BucketStore(b storage.Bucket, dir string) Store {
	return &bucketStore{b: b, dir: strings.TrimSuffix(dir, "/") + "/"}
}

type bucketStore struct {
	b   storage.Bucket
	dir string
}

func (s *bucketStore) Open(ctx context.Context, name string) (ReaderAt, error) {
	key := s.dir + name
	info, err := s.b.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &bucketFile{b: s.b, key: key, size: info.Size}, nil
}

func (s *bucketStore) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	_, err := s.b.Put(ctx, s.dir+name, r, size)
	return err
}

type bucketFile struct {
	b    storage.Bucket
	key  string
	size int64
}

func (f *bucketFile) Size() int64  { return f.size }
func (f *bucketFile) Close() error { return nil }

func (f *bucketFile) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > f.size || off+n < off {
		return nil, fmt.Errorf("%w: read of %d bytes at %d in %s (%d bytes)", ErrCorrupt, n, off, f.key, f.size)
	}
	rc, err := f.b.GetRange(ctx, f.key, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("%s: read %d bytes at %d: %w", f.key, n, off, err)
	}
	return buf, nil
}
