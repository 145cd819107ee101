package lancefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Source is random access to the bytes of one Lance file. Implementations
// must be safe for concurrent use.
type Source interface {
	// Size is the file size in bytes; the footer is located from it.
	Size() int64
	// ReadRange returns exactly n bytes starting at off. The caller owns the
	// returned slice.
	ReadRange(ctx context.Context, off, n int64) ([]byte, error)
}

// RangeGetter is the slice of an object-store client a Source needs.
type RangeGetter interface {
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// NewObjectSource reads the object key through store. size must be the
// object's exact size (Lance manifests record it as file_size_bytes).
func NewObjectSource(store RangeGetter, key string, size int64) Source {
	return &objectSource{store: store, key: key, size: size}
}

type objectSource struct {
	store RangeGetter
	key   string
	size  int64
}

func (s *objectSource) Size() int64 { return s.size }

func (s *objectSource) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	if err := checkRange(off, n, s.size); err != nil {
		return nil, err
	}
	b, err := s.store.GetRange(ctx, s.key, off, n)
	if err != nil {
		return nil, fmt.Errorf("lance file %s: read %d bytes at %d: %w", s.key, n, off, err)
	}
	if int64(len(b)) != n {
		return nil, fmt.Errorf("lance file %s: short read at %d: got %d of %d bytes: %w", s.key, off, len(b), n, ErrCorrupt)
	}
	return b, nil
}

// NewReaderAtSource adapts an io.ReaderAt of known size (an *os.File, a
// bytes.Reader) to a Source.
func NewReaderAtSource(r io.ReaderAt, size int64) Source {
	return &readerAtSource{r: r, size: size}
}

type readerAtSource struct {
	r    io.ReaderAt
	size int64
}

func (s *readerAtSource) Size() int64 { return s.size }

func (s *readerAtSource) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	if err := checkRange(off, n, s.size); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := s.ReadRangeInto(ctx, off, b); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadRangeInto reads exactly len(dst) bytes at off into dst.
func (s *readerAtSource) ReadRangeInto(ctx context.Context, off int64, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := int64(len(dst))
	if err := checkRange(off, n, s.size); err != nil {
		return err
	}
	m, err := s.r.ReadAt(dst, off)
	if m == len(dst) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d bytes at %d: %w", n, off, err)
}

// intoReader is a Source that reads into the caller's buffer: a Cursor
// reads mini-block pages into pooled buffers (read_span.go).
type intoReader interface {
	ReadRangeInto(ctx context.Context, off int64, dst []byte) error
}

// LocalFile is a Source over a file on the local disk.
type LocalFile struct {
	Source
	f *os.File
}

// OpenLocalFile opens path for reading; Close it when done.
func OpenLocalFile(path string) (*LocalFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &LocalFile{Source: NewReaderAtSource(f, st.Size()), f: f}, nil
}

// Close closes the underlying file.
func (l *LocalFile) Close() error { return l.f.Close() }

// checkRange rejects ranges outside [0, size) before anything is allocated
// for them, which is what keeps corrupt offsets from becoming huge reads.
func checkRange(off, n, size int64) error {
	if off < 0 || n < 0 || off > size || n > size-off {
		return fmt.Errorf("range [%d, +%d) outside file of %d bytes: %w", off, n, size, ErrCorrupt)
	}
	return nil
}
