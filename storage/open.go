package storage

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Open returns the bucket a URI names:
//
//	/abs/path            local directory (created if missing)
//	file:///abs/path     the same, as a URI
//	s3://bucket/prefix   a prefix of an S3 bucket, reached with s3
//	memory://            a fresh in-memory bucket (tests, dev servers)
//
// Relative paths are rejected: a catalog's location must not depend on the
// server's working directory.
func Open(ctx context.Context, uri string, s3 S3Config) (Bucket, error) {
	if strings.HasPrefix(uri, "/") {
		return NewFS(filepath.Clean(uri))
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("storage: parse %q: %w", uri, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("storage: %q: file URIs must be local", uri)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("storage: %q: file URIs need an absolute path", uri)
		}
		return NewFS(filepath.Clean(u.Path))
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("storage: %q: missing bucket", uri)
		}
		return NewS3(ctx, s3, u.Host, u.Path)
	case "memory":
		return NewMemory(), nil
	}
	return nil, fmt.Errorf("storage: %q: want an absolute path, file://, s3:// or memory:// URI", uri)
}
