package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is S3's key length limit, enforced everywhere so a key that
// works on disk also works on S3.
const MaxKeyLen = 1024

// reservedDir is the filesystem backend's scratch space (temp files and
// lock files) at the bucket root. It is reserved on every backend so the
// same keys are valid everywhere.
const reservedDir = ".lancecat-tmp"

// ValidateKey reports whether key can name an object. It is the single gate
// every backend passes keys through: a valid key is relative, has no empty,
// "." or ".." segments and no backslash, NUL or control characters, so it
// can never address anything outside the bucket root.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := validateChars(key); err != nil {
		return err
	}
	for i, seg := range strings.Split(key, "/") {
		if err := validateSegment(key, i, seg); err != nil {
			return err
		}
	}
	return nil
}

// validatePrefix checks a List prefix. Unlike a key it may be empty, end in
// "/" or end in a partial segment ("a/b" matches "a/bc"); the partial last
// segment is only ever compared as a string, never used as a path. It may
// not be "." or "..", which MinIO rejects even as a partial segment.
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := validateChars(prefix); err != nil {
		return err
	}
	segs := strings.Split(prefix, "/")
	last := len(segs) - 1
	for i, seg := range segs[:last] {
		if err := validateSegment(prefix, i, seg); err != nil {
			return err
		}
	}
	if segs[last] == "." || segs[last] == ".." {
		return fmt.Errorf("%w: prefix %q ends in a %q segment", ErrInvalidKey, prefix, segs[last])
	}
	return nil
}

func validateChars(s string) error {
	if len(s) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes exceeds %d", ErrInvalidKey, len(s), MaxKeyLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, s)
	}
	// Control characters are legal on S3 but cannot round-trip through its
	// XML listings reliably, and NUL truncates paths on disk.
	for _, c := range s {
		if c == '\\' || c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidKey, s, c)
		}
	}
	return nil
}

func validateSegment(s string, i int, seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, s)
	case seg == "." || seg == "..":
		return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, s, seg)
	case i == 0 && seg == reservedDir:
		return fmt.Errorf("%w: %q is under the reserved %s/", ErrInvalidKey, s, reservedDir)
	}
	return nil
}
