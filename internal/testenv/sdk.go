package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The official LanceDB SDK (Node) and the scripts that drive it: one harness for every interop and
// differential suite, so that how an SDK is found, how a script runs and how its failure reads are
// written once (the model is thanos-io/objstore's objtesting: one helper every package calls).

// EnvLanceDBSDK lists the SDK install directories (scripts/lancedb/install.sh prints one),
// separated by ':'; scripts/with-fixtures.sh, which `make test` wraps around `go test`, exports it.
const EnvLanceDBSDK = "LANCECAT_LANCEDB_SDK"

// SDKs returns the installed SDK directories, oldest pin first, or skips t (fails it when
// LANCECAT_REQUIRE_SERVICES=1) if none is configured.
func SDKs(t testing.TB) []string {
	t.Helper()
	v := os.Getenv(EnvLanceDBSDK)
	if v == "" {
		unavailableHint(t, "the LanceDB SDK", EnvLanceDBSDK, "scripts/with-fixtures.sh, which installs it")
		return nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		// SDKs were installed with node, so this is a broken setup, never a reason to skip.
		t.Fatalf("testenv: %s is set but node is not on PATH: %v", EnvLanceDBSDK, err)
		return nil
	}
	return filepath.SplitList(v)
}

// NewestSDK is the SDK directory of version 0.39.0 among SDKs(t) (skipping like it), else the
// last one: a test that needs one SDK, not each, runs against the newest.
func NewestSDK(t testing.TB) string {
	t.Helper()
	list := SDKs(t)
	for _, s := range list {
		if SDKVersion(s) == "0.39.0" {
			return s
		}
	}
	return list[len(list)-1]
}

// SDKVersion names an SDK directory by its version: "0.39.0" for ".../lancedb-0.39.0".
func SDKVersion(dir string) string { return strings.TrimPrefix(filepath.Base(dir), "lancedb-") }

// repoRoot is this checkout's root, found from this file rather than the test's working directory,
// so a script path reads the same from every package.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// Script is the absolute path of scripts/<elem...> in this checkout.
func Script(elem ...string) string {
	return filepath.Join(append([]string{repoRoot, "scripts"}, elem...)...)
}

// NodeCmd is `node script args...` with the SDK's own logging down to errors (its Rust warnings
// would otherwise bury the test's output). Callers add to Env, Stdin or Dir before running it.
func NodeCmd(ctx context.Context, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "RUST_LOG=error", "LANCEDB_LOG=error")
	return cmd
}

// Node runs `node script args...` (NodeCmd) and returns what it printed on stdout; a failure
// fails t with the script's stderr.
func Node(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	return Run(t, NodeCmd(context.Background(), script, args...))
}

// NodeJSON runs `node script args...` (Node) and decodes what it printed into out, unless out is
// nil; output that is not JSON fails t with the output.
func NodeJSON(t testing.TB, out any, script string, args ...string) {
	t.Helper()
	stdout := Node(t, script, args...)
	if out == nil {
		return
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("testenv: %s printed no JSON of the expected shape: %v\n%s", filepath.Base(script), err, stdout)
	}
}

// Run runs cmd and returns its stdout; a failure fails t with the command and its stderr.
func Run(t testing.TB, cmd *exec.Cmd) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("testenv: %s: %v\n%s", strings.Join(shortArgs(cmd.Args), " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// shortArgs names a script by its base name and cuts long (JSON) arguments, so a failure's first
// line says what ran without repeating a whole job.
func shortArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i == 1:
			a = filepath.Base(a)
		case len(a) > 80:
			a = a[:77] + "..."
		}
		out[i] = a
	}
	return out
}

// JSON is v encoded as one argument of a script.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("testenv: encoding a script argument: %v", err)
	}
	return string(b)
}

// JobFile writes v as JSON into a file of t's own and returns its path: the job of a script whose
// input is too large for an argument.
func JobFile(t testing.TB, v any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(path, []byte(JSON(t, v)), 0o600); err != nil {
		t.Fatalf("testenv: writing %s: %v", path, err)
	}
	return path
}

// CopyDir copies the tree at from to to (which must not exist yet), so a test can write on a
// private copy of a fixture or of another writer's table.
func CopyDir(t testing.TB, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatalf("testenv: copying %s to %s: %v", from, to, err)
	}
}

// CheckedAllocator is an Arrow allocator that fails t, when t ends, if anything it allocated was
// not released: every buffer a test or the code under it takes must be given back.
func CheckedAllocator(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}
