package main

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/spec"
)

// TestCheckLabel: a pin's label must tell specs apart, which info.version (1.0.0 in every
// release) does not.
func TestCheckLabel(t *testing.T) {
	current := spec.Pin{Version: "v0.11.1", SHA256: "old"}
	cases := []struct {
		name  string
		label string
		sha   string
		ok    bool
	}{
		{"an upstream commit", "9a92264", "new", true},
		{"a release tag", "v0.12.0", "new", true},
		{"re-pinning the same file under its label", "v0.11.1", "old", true},
		{"no label", "", "new", false},
		{"the current label on another file", "v0.11.1", "new", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLabel(tc.label, spec.Pin{SHA256: tc.sha, InfoVersion: "1.0.0"}, current)
			assert.Equal(t, err == nil, tc.ok, "%v", err)
		})
	}
}
