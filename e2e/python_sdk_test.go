package e2e

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// Python client venvs: scripts/python/install.sh prints one per pinned set (scripts/python/versions.txt),
// scripts/with-fixtures.sh exports them ':'-separated, newest first. PythonUnavailableEnv is set instead
// when the package index could not be reached: the only reason these suites skip under make test.
const (
	PythonSDKEnv         = "LANCECAT_PYTHON_SDK"
	PythonUnavailableEnv = "LANCECAT_PYTHON_UNAVAILABLE"
)

// pythonVenvs returns the Python client venvs, or skips t (fails it under LANCECAT_REQUIRE_SERVICES=1
// unless the package index was unreachable, which the install reported).
func pythonVenvs(t *testing.T) []string {
	t.Helper()
	v := os.Getenv(PythonSDKEnv)
	if v == "" {
		if why := os.Getenv(PythonUnavailableEnv); why != "" {
			t.Skipf("skipping the Python client suite: %s", why)
		}
		msg := fmt.Sprintf("%s is not set: the Python client suite needs the venvs scripts/python/install.sh makes (run the test through scripts/with-fixtures.sh)", PythonSDKEnv)
		if testenv.RequireServices() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dirs := strings.Split(v, ":")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "bin", "python")); err != nil {
			t.Fatalf("%s names %s, which has no bin/python: %v", PythonSDKEnv, d, err)
		}
	}
	return dirs
}

// venvSet is the pinned set a venv holds ("lancedb-0.40.0" from .../lancedb-0.40.0-<hash>).
func venvSet(dir string) string {
	base := filepath.Base(dir)
	if i := strings.LastIndexByte(base, '-'); i > 0 {
		return base[:i]
	}
	return base
}

func pythonScripts() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "scripts", "e2e", "python")
}

// junit is the part of pytest's --junitxml report read here.
type junit struct {
	Cases []struct {
		Name    string `xml:"name,attr"`
		Time    string `xml:"time,attr"`
		Failure *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
		Error *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"error"`
		Skipped *struct {
			Message string `xml:"message,attr"`
			Type    string `xml:"type,attr"`
		} `xml:"skipped"`
		Out string `xml:"system-out"`
		Err string `xml:"system-err"`
	} `xml:"testsuite>testcase"`
}

// pytestCounts is what one pytest run reported.
type pytestCounts struct{ passed, failed, skipped, xfailed int }

func (c pytestCounts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped, %d xfailed", c.passed, c.failed, c.skipped, c.xfailed)
}

// runPytest runs pytest on files (under scripts/e2e/python) with the venv's Python and env added to the
// environment, and reports each case as a subtest of t: a failing case fails its subtest with pytest's
// report, a skipped or expected-failure case skips it with pytest's reason.
func runPytest(t *testing.T, venv string, env []string, files ...string) pytestCounts {
	t.Helper()
	return runPytestIn(t, pythonScripts(), venv, env, files...)
}

// runPytestIn is runPytest on files under dir (a suite with a conftest.py of its own, like the
// engines' under scripts/e2e/spark and scripts/e2e/ray).
func runPytestIn(t *testing.T, dir, venv string, env []string, files ...string) pytestCounts {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.xml")
	args := append([]string{"-m", "pytest", "-p", "no:cacheprovider", "-p", "no:warnings", "-q", "-rfEsx",
		"--tb=short", "-o", "junit_family=xunit1", "-o", "junit_logging=system-out", "--junitxml", report}, files...)
	// Well under the package timeout, so a hang fails here with the output so far.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "RUST_LOG=error", "LANCEDB_LOG=error", "PYTHONDONTWRITEBYTECODE=1"), env...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	// pytest: 0 all passed, 1 some failed; anything else (collection error, usage, interrupted) is the
	// suite failing as a whole.
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
	if code != 0 && code != 1 {
		t.Fatalf("pytest exited %d:\n%s", code, out)
	}
	b, rerr := os.ReadFile(report)
	assert.NilError(t, rerr, "pytest wrote no report:\n%s", out)
	var r junit
	assert.NilError(t, xml.Unmarshal(b, &r))
	assert.Assert(t, len(r.Cases) > 0, "pytest ran no test:\n%s", out)
	var n pytestCounts
	for _, c := range r.Cases {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case c.Failure != nil:
				n.failed++
				t.Errorf("%s\n%s\n%s%s", c.Failure.Message, c.Failure.Text, c.Out, c.Err)
			case c.Error != nil:
				n.failed++
				t.Errorf("%s\n%s\n%s%s", c.Error.Message, c.Error.Text, c.Out, c.Err)
			case c.Skipped != nil && c.Skipped.Type == "pytest.xfail":
				n.xfailed++
				t.Skipf("expected failure (a known difference): %s", c.Skipped.Message)
			case c.Skipped != nil:
				n.skipped++
				t.Skipf("%s", c.Skipped.Message)
			default:
				n.passed++
				if strings.TrimSpace(c.Out) != "" {
					t.Logf("%s", c.Out)
				}
			}
		})
	}
	if code == 1 && n.failed == 0 {
		t.Fatalf("pytest reported a failure no case carries:\n%s", out)
	}
	t.Logf("pytest %s: %s", strings.Join(files, " "), n)
	return n
}

// TestPythonSDK: the Python LanceDB SDK (every pinned line) against lancecat serve in both of its
// modes, namespace (connect_namespace("rest")) and remote (connect("db://", host_override=...)), on a
// local root and a MinIO root, with authorization off and on (an estate admin's API key):
// scripts/e2e/python/test_sdk.py, value-checked case by case. Every cell runs the full suite (one
// run is a few seconds: the matrix needs no smoke subset).
func TestPythonSDK(t *testing.T) {
	venvs := pythonVenvs(t)
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		for _, venv := range venvs {
			t.Run(venvSet(venv), func(t *testing.T) {
				for _, mode := range []string{"namespace", "remote"} {
					t.Run(mode, func(t *testing.T) {
						cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
						url := serve(t, cfg)
						n := runPytest(t, venv, pythonEnv(url, mode, root, key, dirStorage), "test_sdk.py")
						t.Logf("cell %s/%s/%s/%s: %s", rk.name, authzName(authorized), venvSet(venv), mode, n)
					})
				}
			})
		}
	})
}

// pythonEnv is the environment scripts/e2e/python/conftest.py reads.
func pythonEnv(url, mode, root, key string, dirStorage map[string]string) []string {
	env := []string{"LANCECAT_URL=" + url, "LANCECAT_E2E_MODE=" + mode, "LANCECAT_E2E_ROOT=" + root}
	if key != "" {
		env = append(env, "LANCECAT_E2E_API_KEY="+key, "LANCECAT_E2E_AUTHZ=1")
	}
	if dirStorage != nil {
		// The SDK's own credentials for the table locations (namespace mode on an S3 root): lancecat
		// answers locations with endpoint hints only, never its own keys.
		env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
	}
	return env
}
