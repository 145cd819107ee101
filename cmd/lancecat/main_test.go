package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestServeHelpListsEverySetting(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"serve", "--help"}, &out, &errOut), 0)
	for _, s := range []string{"-listen", "LANCECAT_LISTEN", "127.0.0.1:2333", "-root", "LANCECAT_ROOT", "./lancecat-data",
		"-control-root", "-s3-endpoint", "-s3-region", "-s3-access-key", "-s3-secret-key", "-s3-path-style",
		"-s3-allow-http", "-delimiter", "-max-body-bytes", "268435456", "-log-level", "-shutdown-timeout"} {
		assert.Assert(t, strings.Contains(out.String(), s), "help lacks %q", s)
	}
	assert.Equal(t, errOut.String(), "")
}

func TestBadSettingsExit2(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"serve", "--no-such-flag"}, &out, &errOut), 2)
	assert.Equal(t, run([]string{"frobnicate"}, &out, &errOut), 2)
	t.Setenv("LANCECAT_MAX_BODY_BYTES", "lots")
	errOut.Reset()
	assert.Equal(t, run([]string{"serve"}, &out, &errOut), 2)
	assert.Assert(t, strings.Contains(errOut.String(), "LANCECAT_MAX_BODY_BYTES"), errOut.String())
}

// TestServeWithoutConfigAndSIGTERM builds the binary and runs `lancecat serve` with nothing but a
// free port: it creates its root, answers, and stops cleanly on SIGTERM.
func TestServeWithoutConfigAndSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lancecat")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	assert.NilError(t, build.Run())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	logs := &lockedBuffer{}
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LANCECAT_LISTEN="+addr)
	cmd.Stderr = logs
	assert.NilError(t, cmd.Start())
	defer cmd.Process.Kill() // a no-op once it exited

	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/readyz"); err == nil {
			break
		}
	}
	assert.NilError(t, err, logs.String())
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 200)

	resp, err = http.Post("http://"+addr+"/v1/namespace/%24/list", "application/json", nil)
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusMethodNotAllowed) // list is a GET

	_, err = os.Stat(filepath.Join(dir, "lancecat-data"))
	assert.NilError(t, err, "the embedded default root is created")

	assert.NilError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NilError(t, cmd.Wait(), logs.String())
	assert.Assert(t, strings.Contains(logs.String(), `"msg":"stopped"`), logs.String())
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRootThatLooksLikeAURIIsAMisuse: `serve --root s3:/bad` served a local directory `s3:`; it
// is now refused (exit 2), the first line naming the form expected, and nothing is created. The
// dataset commands parse their URI the same way.
func TestRootThatLooksLikeAURIIsAMisuse(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"serve", "--listen", "127.0.0.1:0", "--root", "s3:/bad"}, &out, &errOut), 2)
	first, _, _ := strings.Cut(errOut.String(), "\n")
	assert.Equal(t, first, `lancecat serve: --root: "s3:/bad" is not an S3 location: want s3://bucket/prefix`)
	errOut.Reset()
	assert.Equal(t, run([]string{"dataset", "inspect", "gs://b/t.lance"}, &out, &errOut), 1)
	assert.Assert(t, strings.Contains(errOut.String(), `unsupported scheme "gs"`), errOut.String())
	entries, err := os.ReadDir(".")
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 0)
}
