// Package ident owns object identifiers: the list of names that addresses a namespace or a table,
// how it travels in a URL path segment, and which names are safe to become storage paths.
package ident

import (
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	nserr "github.com/lancecat/lancecat/errors"
)

// DefaultDelimiter joins id parts in a path segment, as every Lance client does by default.
const DefaultDelimiter = "$"

// MaxSegmentBytes bounds one name: most filesystems refuse longer path elements.
const MaxSegmentBytes = 255

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

// Validate rejects any id that could not be a storage path element or could escape its root:
// empty, "." and ".." parts, "/", "\" and NUL, invalid UTF-8, parts longer than MaxSegmentBytes,
// and parts holding the delimiter (they could not round-trip through a path segment).
func (id ID) Validate(delimiter string) error {
	for i, part := range id {
		if err := validatePart(part, delimiter); err != nil {
			return nserr.InvalidInputf("id part %d (%q): %s", i, part, err.Error())
		}
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
		return reason("longer than 255 bytes")
	case !utf8.ValidString(part):
		return reason("not valid UTF-8")
	case strings.ContainsAny(part, "/\\\x00"):
		return reason(`must not contain "/", "\" or NUL`)
	case delimiter != "" && strings.Contains(part, delimiter):
		return reason("must not contain the delimiter " + delimiter)
	}
	return nil
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
