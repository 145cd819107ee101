package ident_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// hostileNames are the names issue 29 found accepted as index names, and their kin; each is
// refused for every kind with the rule it breaks.
var hostileNames = []struct{ name, rule string }{
	{"", "must not be empty"},
	{"\x00", "control"},
	{"a\x00b", "control"},
	{"a\nb", "control"},
	{"tab\t", "whitespace"},
	{"a\u200bb", "format"},
	{"a\u2028b", "separator"},
	{"a/b", `"/"`},
	{`a\b`, `"\"`},
	{"/", `"/"`},
	{".", `"."`},
	{"..", `"."`},
	{" ", "only whitespace"},
	{"   ", "only whitespace"},
	{" a", "begin or end with whitespace"},
	{"a ", "begin or end with whitespace"},
	{"_rowid", "reserved"},
	{"<script>", "markup"},
	{"x&y", "markup"},
	{`a"b`, "markup"},
	{"a'b", "markup"},
	{"a`b", "markup"},
	{"a\ue000b", "private-use"},
	{"a\U0010fffeb", "unassigned"},
	{"_ROWID", "reserved"},
	{"_rowaddr", "reserved"},
	{"_distance", "reserved"},
	{"_score", "reserved"},
	{"_rowoffset", "reserved"},
	{"_row_created_at_version", "reserved"},
	{"_row_last_updated_at_version", "reserved"},
	{"main", "reserved"},
	{strings.Repeat("x", ident.MaxNameBytes+1), "bytes long"},
	{"\xff", "UTF-8"},
	{"e\u0301", "NFC"},
}

func TestCheckNameRefuses(t *testing.T) {
	for _, kind := range []ident.Kind{ident.Index, ident.Tag, ident.Branch} {
		for _, c := range hostileNames {
			if kind == ident.Branch && c.name == "a/b" {
				continue // a branch's segments
			}
			err := ident.CheckName(kind, c.name)
			assert.Check(t, nserr.Is(err, nserr.ErrInvalidInput), "%s %q: %v", kind, c.name, err)
			assert.Check(t, is.ErrorContains(err, c.rule), "%s %q", kind, c.name)
			assert.Check(t, is.ErrorContains(err, string(kind)+" name "), "%s %q", kind, c.name)
			if err != nil {
				assert.Check(t, !strings.ContainsAny(err.Error(), "\x00\n"), "the message escapes the name: %q", err.Error())
			}
		}
	}
}

func TestCheckNameAccepts(t *testing.T) {
	for _, name := range []string{
		"id_idx", "by-cat", "v1.2", "Straße", "名前", "a b", "a+b", "x@y#1",
		strings.Repeat("x", ident.MaxNameBytes), "_idx", "rowid", "mainline",
	} {
		for _, kind := range []ident.Kind{ident.Index, ident.Tag, ident.Branch} {
			assert.Check(t, ident.CheckName(kind, name), "%s %q", kind, name)
		}
	}
	// A branch is "/"-separated segments; an empty, "." or ".." segment is refused.
	assert.Check(t, ident.CheckName(ident.Branch, "feature/x"))
	for _, bad := range []string{"/x", "x/", "a//b", "a/./b", "a/../b", "../x"} {
		assert.Check(t, is.ErrorContains(ident.CheckName(ident.Branch, bad), "branch name"), bad)
	}
	assert.Check(t, is.ErrorContains(ident.CheckName(ident.Tag, "feature/x"), `"/"`))
}

// The message never carries a long name whole.
func TestCheckNameQuotesShort(t *testing.T) {
	err := ident.CheckName(ident.Index, strings.Repeat("ü", 500))
	assert.Check(t, len(err.Error()) < 300, err.Error())
}

// FuzzCheckName: no input panics, every refusal is a 400 that names the kind, and whatever is
// accepted is a safe path element: bounded, valid NFC UTF-8 without control characters, no
// separators but a branch's "/", no "." or ".." element, no edge whitespace, nothing reserved.
func FuzzCheckName(f *testing.F) {
	for _, c := range hostileNames {
		f.Add(c.name, uint8(0))
	}
	f.Add("id_idx", uint8(2))
	f.Add("feature/x", uint8(2))
	kinds := []ident.Kind{ident.Index, ident.Tag, ident.Branch}
	f.Fuzz(func(t *testing.T, name string, k uint8) {
		kind := kinds[int(k)%len(kinds)]
		err := ident.CheckName(kind, name)
		if err != nil {
			if !nserr.Is(err, nserr.ErrInvalidInput) || !strings.Contains(err.Error(), string(kind)+" name") {
				t.Fatalf("%q: %v", name, err)
			}
			return
		}
		if name == "" || len(name) > ident.MaxNameBytes || !utf8.ValidString(name) || !norm.NFC.IsNormalString(name) {
			t.Fatalf("accepted %q", name)
		}
		if strings.TrimSpace(name) != name || strings.Contains(name, `\`) || strings.EqualFold(name, "_rowid") {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("accepted %q", name)
			}
		}
		for seg := range strings.SplitSeq(name, "/") {
			if kind != ident.Branch && seg != name {
				t.Fatalf("accepted %q with a slash", name)
			}
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q", name)
			}
		}
	})
}
