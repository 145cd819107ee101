package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestAPIKeyListEscapesDescriptions: `apikey list` used to print descriptions raw, so a key's
// description carrying terminal escapes, a carriage return or a tab could clear the screen or draw
// a forged row. Every such character is now printed as a visible escape, one row per key.
func TestAPIKeyListEscapesDescriptions(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	hostile := "ci\x1b[2J\x1b[H\rabc123  user:admin\tforged\u202eexe.txt\u200b\x00\x7f\\x1b"
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"apikey", "create", "--root", root, "--principal", "user:alice", "--description", hostile}, &out, &errb), 0, errb.String())
	out.Reset()
	assert.Equal(t, run([]string{"apikey", "list", "--root", root}, &out, &errb), 0, errb.String())
	listing := out.String()
	for _, bad := range []string{"\x1b", "\r", "\t", "\u202e", "\u200b", "\x00", "\x7f", "\xff"} {
		assert.Assert(t, !strings.Contains(listing, bad), "the listing carries %q: %q", bad, listing)
	}
	assert.Equal(t, strings.Count(listing, "\n"), 2, "a header and one row: %q", listing)
	assert.Assert(t, strings.Contains(listing, `ci\x1b[2J\x1b[H\rabc123  user:admin\tforged\u202eexe.txt\u200b\x00\x7f\\x1b`), listing)

	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"naïve café ✓", "naïve café ✓"},
		{"a\\b", `a\\b`},
		{"bad \xff utf-8", `bad \xff utf-8`},
		{"\ufffd is a real replacement char", "\ufffd is a real replacement char"},
	} {
		assert.Equal(t, printable(tc.in), tc.want)
	}
}
