// Package ident owns object identifiers: the list of names that addresses a namespace or a table,
// how it travels in a URL path segment, and which names are safe to become storage paths.
package ident

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	nserr "github.com/lancecat/lancecat/errors"
)

// DefaultDelimiter joins id parts in a path segment, as every Lance client does by default.
const DefaultDelimiter = "$"

// MaxIDBytes bounds a whole id, its parts joined by a one-byte delimiter ("$", as the directory
// namespace's manifest spells it). A table's directory is named "<8 hex digits>_<id>" and most
// filesystems refuse a path element longer than 255 bytes, so the id gets 255 minus that prefix.
const MaxIDBytes = 255 - len("01234567_")

// MaxSegmentBytes bounds one name: no part can be longer than a whole id.
const MaxSegmentBytes = MaxIDBytes

// ID addresses a namespace or table by its names from the root down. The root namespace is the
// empty ID.
type ID []string

// ParsePath decodes the {id} path segment of a route as it arrived on the wire (still escaped). The
// Lance clients form-encode it (a space is "+"), so it is decoded with query rules, not path rules;
// the root namespace travels as the delimiter itself.
func ParsePath(raw, delimiter string) (ID, error) {
	decoded, err := url.QueryUnescape(raw)
	if err != nil {
		return nil, nserr.InvalidInputf("id %q is not a valid form-encoded path segment: %v", raw, err)
	}
	return Split(decoded, delimiter)
}

// Split splits a decoded id string on delimiter and validates every part.
func Split(s, delimiter string) (ID, error) {
	if delimiter == "" {
		return nil, nserr.InvalidInputf("the id delimiter must not be empty")
	}
	if s == delimiter {
		return ID{}, nil
	}
	if s == "" {
		return nil, nserr.InvalidInputf("id must not be empty (the root namespace is %q)", delimiter)
	}
	id := ID(strings.Split(s, delimiter))
	if err := id.Validate(delimiter); err != nil {
		return nil, err
	}
	return id, nil
}

// Validate rejects any id that could not be a storage path element on every store (local
// filesystems and S3), could escape its root, or could pass for another id: empty, "." and ".."
// parts, "/", "\\", control characters (Unicode Cc: NUL, \n, \r, \t, \x7f…), invisible format
// characters (Cf: zero-width space, BOM, bidi controls…) and line or paragraph separators, names
// not in Unicode NFC (two spellings of "café" would be two objects that render the same), invalid
// UTF-8, parts holding the delimiter (they could not round-trip through a path segment), and ids
// longer than MaxIDBytes in all.
func (id ID) Validate(delimiter string) error {
	total := 0
	for i, part := range id {
		if err := validatePart(part, delimiter); err != nil {
			return nserr.InvalidInputf("id part %d (%+q): %s", i, part, err.Error())
		}
		total += len(part)
	}
	if len(id) > 1 {
		total += len(id) - 1
	}
	if total > MaxIDBytes {
		return nserr.InvalidInputf("id %+q is %d bytes long (its parts joined by one-byte delimiters); at most %d are allowed, so that a table directory named after it fits in a 255-byte file name", strings.Join(id, DefaultDelimiter), total, MaxIDBytes)
	}
	return nil
}

type reason string

func (r reason) Error() string { return string(r) }

func validatePart(part, delimiter string) error {
	switch {
	case part == "":
		return reason("empty name")
	case part == "." || part == "..":
		return reason("relative path names are not allowed")
	case len(part) > MaxSegmentBytes:
		return reason("longer than " + strconv.Itoa(MaxSegmentBytes) + " bytes")
	case !utf8.ValidString(part):
		return reason("not valid UTF-8")
	case strings.ContainsAny(part, "/\\"):
		return reason(`must not contain "/" or "\"`)
	case delimiter != "" && strings.Contains(part, delimiter):
		return reason("must not contain the delimiter " + delimiter)
	}
	for _, r := range part {
		if invisible(r) {
			return reason("must not contain control, format or separator characters (found " + fmt.Sprintf("%U", r) + ")")
		}
	}
	if !norm.NFC.IsNormalString(part) {
		return reason("must be in Unicode normalization form NFC (compose it, e.g. \"e\" + U+0301 as U+00E9)")
	}
	return nil
}

// invisible reports characters a name must not hold: they are not path-safe on every store
// (control characters), or render as nothing and so make two names look the same (format
// characters such as U+200B and U+FEFF, line and paragraph separators).
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Cs)
}

// IsRoot reports whether id is the root namespace.
func (id ID) IsRoot() bool { return len(id) == 0 }

// Name is the last part of id ("" for the root).
func (id ID) Name() string {
	if len(id) == 0 {
		return ""
	}
	return id[len(id)-1]
}

// Parent is id without its last part; the root is its own parent.
func (id ID) Parent() ID {
	if len(id) == 0 {
		return ID{}
	}
	return slices.Clone(id[:len(id)-1])
}

// Child is id extended by name.
func (id ID) Child(name string) ID { return append(slices.Clone(id), name) }

// Equal reports whether both ids name the same object.
func (id ID) Equal(other ID) bool { return slices.Equal(id, other) }

// Join is id as one string, as the clients write it (root: the delimiter itself).
func (id ID) Join(delimiter string) string {
	if len(id) == 0 {
		return delimiter
	}
	return strings.Join(id, delimiter)
}

// PathSegment is id encoded for a route, exactly as the Lance clients encode it.
func (id ID) PathSegment(delimiter string) string {
	return url.QueryEscape(id.Join(delimiter))
}

func (id ID) String() string { return id.Join(DefaultDelimiter) }
