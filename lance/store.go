package lance

import (
	"context"
	"fmt"
	"io"

	"github.com/lancecat/lancecat/storage"
)

// The table layer talks to storage through storage.Bucket (or its Reader
// half where it only reads), scoped to one dataset: keys are relative to the
// dataset root (storage.Sub).
//
// List must return keys in byte order (storage.Bucket guarantees it): with
// the V2 naming scheme that puts the newest manifest first, which is how the
// latest version is found without listing the whole history.

// listAll lists every key under prefix (recursively), in key order.
func listAll(ctx context.Context, store storage.Lister, prefix string) ([]storage.ObjectInfo, error) {
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
func readObject(ctx context.Context, store storage.Reader, key string, limit int64) ([]byte, error) {
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
