//go:build unix

package storage_test

import (
	"fmt"
	"os"
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
		{uri: "file:relative", errText: "want file:///absolute/path"},
		{uri: "s3:///prefix", errText: "missing bucket"},
		{uri: "s3:/bad", errText: "want s3://bucket/prefix"},
		{uri: "file:/x", errText: "want file:///absolute/path"},
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

// TestResolveRoot: a setting that looks like a URI is one of the forms Open serves or is refused
// naming the form meant; `s3:/bad` used to become a local directory `s3:` under the working
// directory. Paths, with a colon anywhere after their start, stay paths.
func TestResolveRoot(t *testing.T) {
	wd, err := os.Getwd()
	assert.NilError(t, err)
	for _, tc := range []struct {
		setting, want, errText string
	}{
		{setting: "/abs/dir", want: "/abs/dir"},
		{setting: "rel/dir", want: filepath.Join(wd, "rel/dir")},
		{setting: "./a:b", want: filepath.Join(wd, "a:b")},
		{setting: "data/s3:x", want: filepath.Join(wd, "data/s3:x")},
		{setting: "/abs/s3:x", want: "/abs/s3:x"},
		{setting: "s3://bucket/prefix", want: "s3://bucket/prefix"},
		{setting: "s3://bucket", want: "s3://bucket"},
		{setting: "S3://bucket/p", want: "s3://bucket/p"},
		{setting: "file:///abs/dir", want: "file:///abs/dir"},
		{setting: "file://localhost/abs", want: "file://localhost/abs"},
		{setting: "memory://", want: "memory://"},

		{setting: "", errText: "empty"},
		{setting: "s3:/bad", errText: `"s3:/bad" is not an S3 location: want s3://bucket/prefix`},
		{setting: "s3:bucket", errText: "want s3://bucket/prefix"},
		{setting: "s3:", errText: "want s3://bucket/prefix"},
		{setting: "s3://", errText: "missing bucket: want s3://bucket/prefix"},
		{setting: "s3:///prefix", errText: "missing bucket"},
		{setting: "s3://bucket:9000/p", errText: "a port"},
		{setting: "s3://key:secret@bucket/p", errText: "user"},
		{setting: "s3://bucket/p?versionId=1", errText: "query"},
		{setting: "file:/x", errText: "want file:///absolute/path"},
		{setting: "file:relative", errText: "want file:///absolute/path"},
		{setting: "file://host/x", errText: "must be local"},
		{setting: "memory:", errText: "want memory://"},
		{setting: "gs://bucket/p", errText: `unsupported scheme "gs"`},
		{setting: "az://container/p", errText: `unsupported scheme "az"`},
		{setting: "abfss://c@acct.dfs.core.windows.net/p", errText: `unsupported scheme "abfss"`},
		{setting: "https://host/p", errText: `unsupported scheme "https"`},
		{setting: "a:b", errText: "./a:b"},
	} {
		got, err := storage.ResolveRoot(tc.setting)
		if tc.errText != "" {
			assert.Check(t, err != nil && strings.Contains(err.Error(), tc.errText), "%q: %v", tc.setting, err)
			assert.Check(t, !strings.Contains(fmt.Sprint(err), "\n"), "%q: one line", tc.setting)
			continue
		}
		if assert.Check(t, err, tc.setting) {
			assert.Check(t, got == tc.want, "%q: got %q, want %q", tc.setting, got, tc.want)
		}
	}
}
