package storage

import (
	"context"
	"fmt"
	"io"
)

// ReadAll reads a whole object into memory.
func ReadAll(ctx context.Context, b Reader, key string) ([]byte, ObjectInfo, error) {
	rc, info, err := b.Get(ctx, key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("storage: read %q: %w", key, err)
	}
	return data, info, nil
}

// Lister is the part of a Bucket ListAll needs.
type Lister interface {
	// List returns one page of keys starting with prefix, in key order.
	List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error)
}

// ListAll lists every object under prefix (recursively), following pages.
func ListAll(ctx context.Context, b Lister, prefix string) ([]ObjectInfo, error) {
	var all []ObjectInfo
	opts := ListOptions{Limit: MaxListLimit}
	for {
		page, err := b.List(ctx, prefix, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Objects...)
		if page.NextStartAfter == "" {
			return all, nil
		}
		// A backend that does not advance would loop forever; fail loudly.
		if page.NextStartAfter <= opts.StartAfter {
			return nil, fmt.Errorf("storage: list %q did not advance past %q", prefix, opts.StartAfter)
		}
		opts.StartAfter = page.NextStartAfter
	}
}
