package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
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
// server's working directory (ResolveRoot makes a setting absolute first).
//
// With s3.Telemetry set the bucket is instrumented (Instrument), whatever its backend.
func Open(ctx context.Context, uri string, s3 S3Config) (Bucket, error) {
	b, backend, err := open(ctx, uri, s3)
	if err != nil {
		return nil, err
	}
	return Instrument(b, backend, s3.Telemetry), nil
}

// open is Open's bucket before instrumentation, and its backend's label.
func open(ctx context.Context, uri string, s3 S3Config) (Bucket, string, error) {
	if strings.HasPrefix(uri, "/") {
		b, err := NewFS(filepath.Clean(uri))
		return b, "fs", err
	}
	if _, ok := uriScheme(uri); !ok {
		return nil, "", fmt.Errorf("storage: %q: want an absolute path, file:///abs/dir, s3://bucket/prefix or memory://", uri)
	}
	u, err := checkURI(uri)
	if err != nil {
		return nil, "", fmt.Errorf("storage: %w", err)
	}
	switch u.Scheme {
	case "file":
		b, err := NewFS(filepath.Clean(u.Path))
		return b, "fs", err
	case "s3":
		b, err := NewS3(ctx, s3, u.Host, u.Path)
		return b, "s3", err
	}
	return NewMemory(), "memory", nil // checkURI lets only file, s3 and memory through
}

// ResolveRoot turns a root setting (--root, --control-root, a dataset's URI on the command line)
// into what Open takes, and is the one place such a setting is parsed. A path is a local
// directory, a relative one made absolute against the working directory (once, at startup). A
// setting that looks like a URI — a scheme and its colon before any slash, as in s3:bucket,
// s3:/x, gs://b or file:/x — must be one of the forms Open serves, or it is refused with the form
// expected: taken as a path, `s3:/bad` used to become a local directory named `s3:` under the
// working directory, and the catalog served from there. A directory whose name holds a colon is
// still reachable: ./s3:x is a path.
func ResolveRoot(setting string) (string, error) {
	switch {
	case setting == "":
		return "", errors.New("empty: want a directory, file:///abs/dir, s3://bucket/prefix or memory://")
	case filepath.IsAbs(setting):
		return setting, nil
	}
	if scheme, ok := uriScheme(setting); ok {
		if _, err := checkURI(setting); err != nil {
			return "", err
		}
		// The scheme in lower case: everything after compares URIs by their s3:// or file:// prefix.
		return scheme + setting[len(scheme):], nil
	}
	return filepath.Abs(setting)
}

// schemeRE is a URI's scheme and its colon (RFC 3986: a letter, then letters, digits, + - .).
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// uriScheme is the lower-cased scheme of s, when s looks like a URI.
func uriScheme(s string) (string, bool) {
	m := schemeRE.FindString(s)
	if m == "" {
		return "", false
	}
	return strings.ToLower(m[:len(m)-1]), true
}

// checkURI parses a URI of one of the forms Open serves, or says which form was meant.
func checkURI(uri string) (*url.URL, error) {
	scheme, _ := uriScheme(uri)
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid URI (%w)", uri, err)
	}
	authority := strings.HasPrefix(uri[len(scheme)+1:], "//")
	extras := u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != ""
	switch scheme {
	case "s3":
		switch {
		case !authority:
			return nil, fmt.Errorf("%q is not an S3 location: want s3://bucket/prefix", uri)
		case u.Host == "":
			return nil, fmt.Errorf("%q is missing bucket: want s3://bucket/prefix", uri)
		case u.Port() != "" || extras:
			return nil, fmt.Errorf("%q is not an S3 location (a port, user, query or fragment): want s3://bucket/prefix", uri)
		}
	case "file":
		switch {
		case !authority || !strings.HasPrefix(u.Path, "/"):
			return nil, fmt.Errorf("%q is not a local file URI: want file:///absolute/path", uri)
		case u.Host != "" && u.Host != "localhost":
			return nil, fmt.Errorf("%q: file URIs must be local: want file:///absolute/path", uri)
		case extras:
			return nil, fmt.Errorf("%q is not a local file URI (a user, query or fragment): want file:///absolute/path", uri)
		}
	case "memory":
		if !authority || extras {
			return nil, fmt.Errorf("%q: want memory://", uri)
		}
	default:
		return nil, fmt.Errorf("%q: unsupported scheme %q: want an absolute path, file:///abs/dir, s3://bucket/prefix or memory:// (a relative directory whose name has a colon: ./%s)",
			uri, scheme, uri)
	}
	return u, nil
}
