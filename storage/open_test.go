//go:build unix

package storage_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		uri     string
		want    string // type name, or "" for an error
		errText string
	}{
		{uri: filepath.Join(dir, "a"), want: "*storage.FS"},
		{uri: "file://" + filepath.Join(dir, "b"), want: "*storage.FS"},
		{uri: "file://localhost" + filepath.Join(dir, "c"), want: "*storage.FS"},
		{uri: "memory://", want: "*storage.Memory"},
		{uri: "relative/path", errText: "absolute path"},
		{uri: "file://host/x", errText: "must be local"},
		{uri: "file:relative", errText: "absolute path"},
		{uri: "s3:///prefix", errText: "missing bucket"},
		{uri: "gs://bucket", errText: "want an absolute path"},
	} {
		b, err := storage.Open(t.Context(), tc.uri, storage.S3Config{})
		if tc.want == "" {
			assert.Check(t, err != nil && strings.Contains(err.Error(), tc.errText), "%s: %v", tc.uri, err)
			continue
		}
		if !assert.Check(t, err, tc.uri) {
			continue
		}
		assert.Check(t, fmt.Sprintf("%T", b) == tc.want, "%s: got %T", tc.uri, b)
		_, err = b.Put(t.Context(), "k", strings.NewReader("v"), 1)
		assert.Check(t, err, tc.uri)
	}
	// The fs URIs created their directories and put the key there.
	for _, sub := range []string{"a", "b", "c"} {
		assert.Check(t, fileExists(filepath.Join(dir, sub, "k")), sub)
	}
}
