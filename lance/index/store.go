package index

import (
	"context"
	"io"
)

// Store is the index directory _indices/<uuid>/ of one index segment.
type Store interface {
	// Open returns random access to the named file and its size.
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
