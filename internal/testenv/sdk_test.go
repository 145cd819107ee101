package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSDKsUnset(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvLanceDBSDK, "")
	f := &fakeTB{}
	if got := SDKs(f); got != nil || !f.skipped || f.failed {
		t.Fatalf("SDKs: got %v skipped=%v failed=%v", got, f.skipped, f.failed)
	}
	if !strings.Contains(f.msg, EnvLanceDBSDK+" unset") || !strings.Contains(f.msg, "scripts/with-fixtures.sh") {
		t.Errorf("SDKs skip message = %q", f.msg)
	}
	t.Setenv(EnvRequireServices, "1")
	f = &fakeTB{}
	if SDKs(f); !f.failed || f.skipped {
		t.Errorf("SDKs with %s=1: failed=%v skipped=%v, want a failure", EnvRequireServices, f.failed, f.skipped)
	}
}

func TestSDKVersionAndScript(t *testing.T) {
	if got := SDKVersion("/cache/sdk/lancedb-0.39.0"); got != "0.39.0" {
		t.Errorf("SDKVersion = %q", got)
	}
	// Every package reaches the same scripts whatever its directory.
	if _, err := os.Stat(Script("lancedb", "install.sh")); err != nil {
		t.Errorf("Script: %v", err)
	}
}

func TestRunFailsWithStderr(t *testing.T) {
	f := &fatalfTB{}
	// NodeCmd's environment, with sh in place of node so that the test needs no node.
	cmd := NodeCmd(context.Background(), "script.mjs")
	cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", "echo the reason >&2; exit 3"}
	Run(f, cmd)
	if !f.failed || !strings.Contains(f.msg, "the reason") || !strings.Contains(f.msg, "exit status 3") {
		t.Errorf("Run failure: failed=%v msg=%q", f.failed, f.msg)
	}
	if !strings.Contains(strings.Join(cmd.Env, " "), "RUST_LOG=error") {
		t.Error("NodeCmd does not quiet the SDK's logging")
	}
}

func TestJobFileAndCopyDir(t *testing.T) {
	path := JobFile(t, map[string]int{"n": 1})
	b, err := os.ReadFile(path)
	if err != nil || string(b) != `{"n":1}` {
		t.Fatalf("JobFile wrote %q (%v)", b, err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	CopyDir(t, filepath.Dir(path), dst)
	if b, err := os.ReadFile(filepath.Join(dst, "job.json")); err != nil || string(b) != `{"n":1}` {
		t.Errorf("CopyDir copied %q (%v)", b, err)
	}
}

func TestCheckedAllocatorFindsALeak(t *testing.T) {
	f := &cleanupTB{}
	mem := CheckedAllocator(f)
	buf := mem.Allocate(64)
	f.run()
	if !f.errored {
		t.Error("a buffer never freed passed the check")
	}
	mem.Free(buf)
	f = &cleanupTB{}
	mem = CheckedAllocator(f)
	mem.Free(mem.Allocate(64))
	f.run()
	if f.errored {
		t.Error("a freed buffer failed the check")
	}
}

func TestServe(t *testing.T) {
	var stopped bool
	ready := make(chan net.Addr, 1)
	t.Run("serves", func(t *testing.T) {
		url := Serve(t, ready, func(ctx context.Context) error {
			ready <- &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
			<-ctx.Done()
			stopped = true
			return nil
		})
		if url != "http://127.0.0.1:1" {
			t.Errorf("Serve = %q", url)
		}
	})
	if !stopped {
		t.Error("the server was not stopped when its test ended")
	}
	f := &fatalfTB{}
	Serve(f, make(chan net.Addr), func(context.Context) error { return errors.New("no root") })
	if !f.failed || !strings.Contains(f.msg, "no root") {
		t.Errorf("a server that does not start: failed=%v msg=%q", f.failed, f.msg)
	}
}

// fatalfTB records Fatalf's message (fakeTB keeps only Fatal's).
type fatalfTB struct {
	fakeTB
}

func (f *fatalfTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

// cleanupTB runs its cleanups when told and records Errorf (AssertSize reports through it).
type cleanupTB struct {
	fakeTB
	cleanups []func()
	errored  bool
}

func (c *cleanupTB) Cleanup(f func())      { c.cleanups = append(c.cleanups, f) }
func (c *cleanupTB) Errorf(string, ...any) { c.errored = true }
func (c *cleanupTB) run() {
	for _, f := range c.cleanups {
		f()
	}
}
