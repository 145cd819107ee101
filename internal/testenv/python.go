package testenv

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Python client venvs other than the LanceDB SDK lines: scripts/python/install.sh installs each set
// of scripts/python/versions.txt into a venv of its own and scripts/with-fixtures.sh exports the
// venv of set <name>-<version> as LANCECAT_PYTHON_<NAME> (pylance-14.0.2: LANCECAT_PYTHON_PYLANCE),
// or EnvPythonUnavailable (the reason) when the package index could not be reached.
const (
	EnvPylance           = "LANCECAT_PYTHON_PYLANCE"
	EnvPythonUnavailable = "LANCECAT_PYTHON_UNAVAILABLE"
	// EnvMavenUnavailable is set instead of a LANCECAT_MAVEN_<SET> jar directory (to the reason)
	// when Maven Central could not be reached (scripts/python/install-maven.sh).
	EnvMavenUnavailable = "LANCECAT_MAVEN_UNAVAILABLE"
)

// PythonVenv is the venv env names (the first of a ':'-separated list), or skips t: with the
// install's reason when the package index was unreachable (the one skip make test allows), failing
// t instead under LANCECAT_REQUIRE_SERVICES=1 otherwise.
func PythonVenv(t testing.TB, env string) string {
	t.Helper()
	v, _, _ := strings.Cut(os.Getenv(env), ":")
	if v == "" {
		if why := os.Getenv(EnvPythonUnavailable); why != "" {
			t.Skipf("testenv: skipping: %s", why)
			return ""
		}
		unavailableHint(t, "the Python venv "+env, env, "scripts/with-fixtures.sh, which installs it")
		return ""
	}
	if _, err := os.Stat(filepath.Join(v, "bin", "python")); err != nil {
		t.Fatalf("testenv: %s names %s, which has no bin/python: %v", env, v, err)
	}
	return v
}

// MavenJars is the jar directory env names (scripts/with-fixtures.sh exports LANCECAT_MAVEN_<SET>),
// holding at least one jar, or skips t like PythonVenv (EnvMavenUnavailable is the one allowed skip).
func MavenJars(t testing.TB, env string) string {
	t.Helper()
	d := os.Getenv(env)
	if d == "" {
		if why := os.Getenv(EnvMavenUnavailable); why != "" {
			t.Skipf("testenv: skipping: %s", why)
			return ""
		}
		unavailableHint(t, "the Maven jars "+env, env, "scripts/with-fixtures.sh, which installs them")
		return ""
	}
	if jars, err := filepath.Glob(filepath.Join(d, "*.jar")); err != nil || len(jars) == 0 {
		t.Fatalf("testenv: %s names %s, which holds no jar (%v)", env, d, err)
	}
	return d
}

// Pylance is the venv of the pinned pylance (the `lance` package) or skips t like PythonVenv.
func Pylance(t testing.TB) string {
	t.Helper()
	return PythonVenv(t, EnvPylance)
}

// PythonCmd is `<venv>/bin/python script args...` with pylance's own logging down to errors.
// Callers add to Env before running it.
func PythonCmd(ctx context.Context, venv, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "RUST_LOG=error", "LANCE_LOG=error", "PYTHONDONTWRITEBYTECODE=1")
	return cmd
}

// PythonJSON runs `<venv>/bin/python script args...` and decodes what it printed into out (unless
// out is nil); a failure fails t with the script's stderr.
func PythonJSON(t testing.TB, out any, venv, script string, args ...string) {
	t.Helper()
	stdout := Run(t, PythonCmd(context.Background(), venv, script, args...))
	if out == nil {
		return
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("testenv: %s printed no JSON of the expected shape: %v\n%s", filepath.Base(script), err, stdout)
	}
}
