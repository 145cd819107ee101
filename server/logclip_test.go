package server

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestAccessLineClipsMethodAndPath: the access line copies a bounded prefix of the method and
// path (issue 11 item 5: 8 KB methods made 8 KB log lines), cut on a rune boundary.
func TestAccessLineClipsMethodAndPath(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"short", "GET", 32, "GET"},
		{"exact", strings.Repeat("A", 32), 32, strings.Repeat("A", 32)},
		{"long", strings.Repeat("A", 8192), 32, strings.Repeat("A", 32) + "…(8192 bytes)"},
		{"rune boundary", strings.Repeat("A", 31) + "é" + "B", 32, strings.Repeat("A", 31) + "…(34 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, clipLogged(tc.in, tc.max), tc.want)
		})
	}
}
