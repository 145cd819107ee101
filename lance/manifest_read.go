package lance

import (
	"context"
	"fmt"
	"io"

	"github.com/lancecat/lancecat/storage"
)

// storeRange reads ranges of one object through storage.Reader.GetRange.
type storeRange struct {
	ctx   context.Context
	store storage.Reader
	key   string
	size  int64
}

func (s storeRange) Size() int64 { return s.size }

func (s storeRange) ReadRange(off, n int64) ([]byte, error) {
	rc, err := s.store.GetRange(s.ctx, s.key, off, n)
	if err != nil {
		return nil, fmt.Errorf("get %s [%d,+%d): %w", s.key, off, n, err)
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		// A short body means the object changed size under us: manifests are
		// immutable, so this is a replaced or truncated file.
		return nil, fmt.Errorf("read %s [%d,+%d): %w", s.key, off, n, err)
	}
	return buf, nil
}

// ReadManifestFile reads and decodes the manifest file at key, with its index
// section and inline transaction. size is the object's size when known (from
// a listing, a tag's manifestSize); pass -1 to Stat it first.
func ReadManifestFile(ctx context.Context, store storage.Reader, key string, size int64) (*ManifestFile, error) {
	return readManifestFile(ctx, store, key, size, true)
}

func readManifestFile(ctx context.Context, store storage.Reader, key string, size int64, sections bool) (*ManifestFile, error) {
	if size < 0 {
		info, err := store.Stat(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("lance: stat manifest %s: %w", key, err)
		}
		size = info.Size
	}
	f, err := decodeManifestFile(storeRange{ctx: ctx, store: store, key: key, size: size}, sections)
	if err != nil {
		return nil, fmt.Errorf("lance: manifest %s: %w", key, err)
	}
	return f, nil
}

// readManifestSummary reads only the version and timestamp of the manifest
// at key (size as for readManifestFile).
func readManifestSummary(ctx context.Context, store storage.Reader, key string, size int64) (manifestSummary, error) {
	if size < 0 {
		info, err := store.Stat(ctx, key)
		if err != nil {
			return manifestSummary{}, fmt.Errorf("lance: stat manifest %s: %w", key, err)
		}
		size = info.Size
	}
	sum, err := decodeManifestSummary(storeRange{ctx: ctx, store: store, key: key, size: size})
	if err != nil {
		return manifestSummary{}, fmt.Errorf("lance: manifest %s: %w", key, err)
	}
	return sum, nil
}
