package storage_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

func TestValidateKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"a/b/c.lance", true},
		{"_versions/1.manifest", true},
		{".hidden/..dots/...", true},
		{"sp ace/ünï/q?x=1#f", true},
		{".lancecat-tmpx/k", true},
		{"x/.lancecat-tmp/k", true}, // reserved only at the root
		{strings.Repeat("k", storage.MaxKeyLen), true},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/./b", false},
		{"a/../b", false},
		{"../a", false},
		{"a\\b", false},
		{"a\x00b", false},
		{"a\tb", false},
		{"a\x7fb", false},
		{"\xc3\x28", false},
		{".lancecat-tmp", false},
		{".lancecat-tmp/k", false},
		{strings.Repeat("k", storage.MaxKeyLen+1), false},
	} {
		err := storage.ValidateKey(tc.key)
		if tc.ok {
			assert.Check(t, err, "%q", tc.key)
		} else {
			assert.Check(t, is.ErrorIs(err, storage.ErrInvalidKey), "%q", tc.key)
		}
	}
}
