//go:build unix && !linux

package storage

import "os"

// beneath is Linux's one-call openat2 fast path; elsewhere every path goes
// through os.Root.
type beneath struct{}

func openBeneath(string) *beneath { return nil }

func (*beneath) close() {}

func (*beneath) open(string, string, int) (*os.File, bool, error) { return nil, false, nil }

func (*beneath) stat(string) (ObjectInfo, bool, error) { return ObjectInfo{}, false, nil }
