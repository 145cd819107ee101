package ident_test

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

func TestParsePath(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		delim string
		want  ident.ID
		err   bool
	}{
		{name: "root is the delimiter", raw: "%24", delim: "$", want: ident.ID{}},
		{name: "root unescaped", raw: "$", delim: "$", want: ident.ID{}},
		{name: "one part", raw: "prod", delim: "$", want: ident.ID{"prod"}},
		{name: "nested", raw: "prod%24team%24t", delim: "$", want: ident.ID{"prod", "team", "t"}},
		{name: "plus is a space", raw: "a+b%24c", delim: "$", want: ident.ID{"a b", "c"}},
		{name: "escaped plus", raw: "a%2Bb", delim: "$", want: ident.ID{"a+b"}},
		{name: "client example", raw: "a+b%24%C3%BC%2Fx%25y", delim: "$", err: true}, // ü/x%y holds a slash
		{name: "unicode and percent", raw: "a+b%24%C3%BCx%25y", delim: "$", want: ident.ID{"a b", "üx%y"}},
		{name: "custom delimiter", raw: "a.b", delim: ".", want: ident.ID{"a", "b"}},
		{name: "custom delimiter root", raw: ".", delim: ".", want: ident.ID{}},
		{name: "empty", raw: "", delim: "$", err: true},
		{name: "empty middle part", raw: "a%24%24b", delim: "$", err: true},
		{name: "trailing delimiter", raw: "a%24", delim: "$", err: true},
		{name: "dot", raw: "a%24.", delim: "$", err: true},
		{name: "dotdot", raw: "..%24x", delim: "$", err: true},
		{name: "slash", raw: "a%2Fb", delim: "$", err: true},
		{name: "backslash", raw: "a%5Cb", delim: "$", err: true},
		{name: "nul", raw: "a%00b", delim: "$", err: true},
		{name: "bad escape", raw: "a%zz", delim: "$", err: true},
		{name: "invalid utf8", raw: "a%ff", delim: "$", err: true},
		// A table directory is "<8 hex>_<id>": the whole id gets 255 - 9 bytes (it used to be 255
		// per part, and such a table's directory could not be created: a ghost row, 500).
		{name: "246 bytes ok", raw: strings.Repeat("x", 246), delim: "$", want: ident.ID{strings.Repeat("x", 246)}},
		{name: "247 bytes", raw: strings.Repeat("x", 247), delim: "$", err: true},
		{name: "255 bytes", raw: strings.Repeat("x", 255), delim: "$", err: true},
		{name: "246 bytes with delimiters ok", raw: strings.Repeat("x", 122) + "%24" + strings.Repeat("y", 123), delim: "$",
			want: ident.ID{strings.Repeat("x", 122), strings.Repeat("y", 123)}},
		{name: "247 bytes with delimiters", raw: strings.Repeat("x", 123) + "%24" + strings.Repeat("y", 123), delim: "$", err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ident.ParsePath(c.raw, c.delim)
			if c.err {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "got %v, %v", got, err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, c.want)
		})
	}
}

// TestValidateRefusesWhatStorageOrEyesCannotTellApart: every character class a store refuses
// in a path (control characters), or that makes two names render the same (format characters,
// separators, non-NFC spellings), is refused with 400 code 13 before anything is written. These
// all used to pass: the namespace then committed a row for a directory the store refused.
func TestValidateRefusesWhatStorageOrEyesCannotTellApart(t *testing.T) {
	cases := []struct {
		name string
		part string
		ok   bool
	}{
		{"newline", "q\nq", false},
		{"carriage return", "q\rq", false},
		{"tab", "q\tq", false},
		{"SOH", "q\x01q", false},
		{"DEL", "q\x7fq", false},
		{"C1 control", "q\u0085q", false},
		{"zero-width space", "caf\u200Be", false},
		{"zero-width joiner", "a\u200Db", false},
		{"BOM", "\uFEFFname", false},
		{"right-to-left override", "a\u202Eb", false},
		{"soft hyphen", "a\u00ADb", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"decomposed e acute (NFD)", "cafe\u0301", false},
		{"angstrom sign (not NFC)", "\u212B", false},
		{"composed e acute (NFC)", "caf\u00E9", true},
		{"space", "a b", true},
		{"CJK", "表格", true},
		{"emoji", "t\U0001F600", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ident.ID{"ns", c.part}.Validate("$")
			if c.ok {
				assert.NilError(t, err)
				return
			}
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%+q: got %v", c.part, err)
			// Also through the wire form every door parses.
			_, err = ident.ParsePath(ident.ID{"ns", c.part}.PathSegment("$"), "$")
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%+q: got %v", c.part, err)
		})
	}
}

func TestValidateRejectsDelimiterInName(t *testing.T) {
	err := ident.ID{"ns", "t$1"}.Validate("$")
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput))
}

func TestPathSegmentRoundTrip(t *testing.T) {
	for _, id := range []ident.ID{{}, {"a b"}, {"prod", "üx%y", "a+b"}, {"x?&#:"}} {
		got, err := ident.ParsePath(id.PathSegment("$"), "$")
		assert.NilError(t, err)
		assert.DeepEqual(t, got, id)
	}
}

func TestParentChild(t *testing.T) {
	id := ident.ID{"a", "b"}
	assert.DeepEqual(t, id.Parent(), ident.ID{"a"})
	assert.Equal(t, id.Name(), "b")
	assert.DeepEqual(t, id.Parent().Child("c"), ident.ID{"a", "c"})
	assert.DeepEqual(t, id, ident.ID{"a", "b"}) // Child must not alias the parent's array
	assert.Assert(t, ident.ID{}.IsRoot())
	assert.Equal(t, ident.ID{}.Join("$"), "$")
}

// FuzzParsePath: no input panics, and whatever parses is safe to become a path below a root.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"%24", "a%24b", "a+b", "..", "a%2F..", "%00", "a%24%24b", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := ident.ParsePath(raw, "$")
		if err != nil {
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput))
			return
		}
		for _, part := range id {
			assert.Assert(t, part != "" && part != "." && part != "..")
			assert.Assert(t, !strings.ContainsAny(part, "/\\\x00$"))
			assert.Assert(t, len(part) <= ident.MaxSegmentBytes)
			assert.Assert(t, norm.NFC.IsNormalString(part))
			for _, r := range part {
				assert.Assert(t, !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r), "%+q", part)
			}
		}
		assert.Assert(t, len(strings.Join(id, "$")) <= ident.MaxIDBytes)
	})
}
