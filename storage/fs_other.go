//go:build !unix

package storage

import "errors"

// FS is unavailable off Unix: its atomic conditional writes rely on
// link(2) and flock(2).
type FS struct{ Bucket }

// NewFS reports that the filesystem backend needs a Unix host.
func NewFS(root string) (*FS, error) {
	return nil, errors.New("storage: the filesystem backend requires a Unix host")
}
