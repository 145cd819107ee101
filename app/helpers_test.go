package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/lancecat/lancecat/catalog/governed"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/server/servertest"
	"github.com/lancecat/lancecat/spec"
	"gotest.tools/v3/assert"
)

// The helpers this package's tests share with the other side of the HTTP seam (servertest).
type syncBuffer = servertest.SyncBuffer

var (
	expect     = servertest.Expect
	lz4Stream  = servertest.LZ4Stream
	logLines   = servertest.LogLines
	accessLine = servertest.AccessLine
)

// credentialOptionNames are what vend_credentials false strips (the governed catalog's policy).
var credentialOptionNames = governed.CredentialOptionNames()

// pinnedOperations are the operations the server routes (server.SpecOperations): server's
// generated route test (routes_gen_test.go) proves they are the pinned spec's, in its order, and
// pinnedOperationCount is the pin's own count.
var (
	pinnedOperations     = mustSpecOperations()
	pinnedOperationCount = spec.LanceNamespace().Operations
)

func mustSpecOperations() []server.Operation {
	ops, err := server.SpecOperations()
	if err != nil {
		panic(err)
	}
	return ops
}

func ptr[T any](v T) *T { return &v }

// tree lists every file under dir (relative paths): what "intact" compares.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	assert.NilError(t, err)
	sort.Strings(out)
	return out
}

// send makes one raw request (contentType "" sends none; edit, when not nil, signs it) and
// answers its status and body: the bytes, content type and query exactly as a hostile client
// would send them.
func send(t testing.TB, method, url, contentType string, body []byte, edit func(context.Context, *http.Request) error) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	assert.NilError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if edit != nil {
		assert.NilError(t, edit(context.Background(), req))
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp.StatusCode, out
}
