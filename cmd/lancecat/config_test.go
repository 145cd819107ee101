package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestServeConfigFile (issue 32, item 8): `lancecat serve --config` takes its settings from a YAML
// file under the environment and the flags; --print-config shows the result, secrets masked, and
// serves nothing; a wrong file is a misuse (exit 2) naming its line. Operator commands read the
// same file.
func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lancecat.yaml")
	assert.NilError(t, os.WriteFile(file, []byte("root: "+filepath.Join(dir, "data")+"\nlisten: 127.0.0.1:7001\ns3:\n  secret-key: from-the-file\nlog-level: warn\n"), 0o600))
	t.Setenv("LANCECAT_LOG_LEVEL", "error")

	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"serve", "--config", file, "--listen", "127.0.0.1:7002", "--print-config"}, &out, &errOut), 0, errOut.String())
	text := out.String()
	assert.Check(t, is.Contains(text, "listen: 127.0.0.1:7002"), "the flag beats the file")
	assert.Check(t, is.Contains(text, "log-level: error"), "the environment beats the file")
	assert.Check(t, is.Contains(text, "root: "+filepath.Join(dir, "data")), "the file beats the default")
	assert.Check(t, is.Contains(text, `s3-secret-key: "********"`))
	assert.Check(t, !strings.Contains(text, "from-the-file"), text)
	_, err := os.Stat(filepath.Join(dir, "data"))
	assert.Check(t, os.IsNotExist(err), "--print-config opens nothing")

	// The variable names the file too.
	out.Reset()
	t.Setenv("LANCECAT_CONFIG", file)
	assert.Equal(t, run([]string{"serve", "--print-config"}, &out, &errOut), 0, errOut.String())
	assert.Check(t, is.Contains(out.String(), "listen: 127.0.0.1:7001"))

	// A typo is refused with its line and the setting meant.
	bad := filepath.Join(dir, "bad.yaml")
	assert.NilError(t, os.WriteFile(bad, []byte("listen: 127.0.0.1:7001\nauthz-mode: openfga\n"), 0o600))
	errOut.Reset()
	assert.Equal(t, run([]string{"serve", "--config", bad}, &out, &errOut), 2)
	assert.Check(t, is.Contains(errOut.String(), `bad.yaml:2: unknown setting "authz-mode"`))

	// An operator command reads the same file (its help hides the HTTP knobs, not --config).
	out.Reset()
	errOut.Reset()
	assert.Equal(t, run([]string{"trash", "list", "--help"}, &out, &errOut), 0)
	assert.Check(t, is.Contains(out.String(), "--config"))
}
