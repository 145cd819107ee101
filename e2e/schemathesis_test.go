package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// schemathesisSet is the pinned set (scripts/python/versions.txt) the suite runs.
const schemathesisSet = "schemathesis-4.32.5"

// TestSchemathesis (issue 31, item 7): property-based tests of the HTTP contract — schemathesis
// generates requests for all 54 operations from the spec we serve (gen/nsapi embeds it), through
// its coverage, fuzzing and stateful phases, and no answer may be a 5xx. Twice, each bounded in
// time: with the ids it generates (mostly unknown objects: parsing and refusal paths), and with
// every id set to a table and namespace that exist (the doors' work on real objects, junk bodies
// included). A fixed seed makes a failure reproducible: the output names the failing request.
func TestSchemathesis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs schemathesis for two minutes")
	}
	venv := installPythonSet(t, schemathesisSet)
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "catalog")
	cfg.LogLevel = "error"
	url := serve(t, cfg)
	seedSchemathesis(t, url)

	dir := t.TempDir()
	spec, err := nsapi.GetSpec()
	assert.NilError(t, err)
	raw, err := json.Marshal(spec)
	assert.NilError(t, err)
	specFile := filepath.Join(dir, "lance-namespace.json")
	assert.NilError(t, os.WriteFile(specFile, raw, 0o644))
	fixed := filepath.Join(dir, "fixed-ids.toml")
	assert.NilError(t, os.WriteFile(fixed, []byte("[parameters]\n\"path.id\" = \"ns$t\"\n"), 0o644))

	budget := "40"
	if s := os.Getenv("LANCECAT_SCHEMATHESIS_SECONDS"); s != "" {
		budget = s
	}
	for _, run := range []struct {
		name   string
		config []string
	}{
		{"generated ids", nil},
		{"existing objects", []string{"--config-file", fixed}},
	} {
		t.Run(run.name, func(t *testing.T) {
			// Through python -m: the venv's console scripts name the interpreter of the temporary
			// directory it was built in (scripts/python/install.sh moves it into place).
			args := append(append([]string{"-m", "schemathesis.cli"}, run.config...), "run", specFile, "--url", url,
				"--checks", "not_a_server_error", "--phases", "coverage,fuzzing,stateful",
				"--max-time", budget, "--workers", "1", "--seed", "20261203", "--request-timeout", "30",
				"--suppress-health-check", "all", "--no-color")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), args...)
			cmd.Env = append(os.Environ(), "SCHEMATHESIS_HOOKS=schemathesis_hooks", "PYTHONPATH="+pythonScripts())
			out, err := cmd.CombinedOutput()
			text := string(out)
			if m := regexp.MustCompile(`(?m)^\s*(\d+) generated.*$`).FindString(text); m != "" {
				t.Logf("%s: %s", run.name, strings.TrimSpace(m))
			}
			if err != nil {
				t.Fatalf("schemathesis (%v) found failures:\n%s", err, tail(text, 12000))
			}
		})
	}
}

// seedSchemathesis makes the namespace ns and the table ns$t with rows, a tag and an index, so
// the doors have real objects to work on.
func seedSchemathesis(t *testing.T, url string) {
	t.Helper()
	c, err := nsclient.NewClientWithResponses(url)
	assert.NilError(t, err)
	ctx := context.Background()
	n, err := c.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	assert.Equal(t, n.StatusCode(), 200, "%s", n.Body)
	tb, err := c.CreateTableWithBodyWithResponse(ctx, "ns$t", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(schemathesisRows(t)))
	assert.NilError(t, err)
	assert.Equal(t, tb.StatusCode(), 200, "%s", tb.Body)
}

// installPythonSet installs a pinned tool set (scripts/python/install.sh) and answers its venv;
// it skips only when the package index is unreachable (install.sh's status 75), as the client
// suites do.
func installPythonSet(t *testing.T, set string) string {
	t.Helper()
	cmd := exec.Command("../scripts/python/install.sh", set)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 75 {
		t.Skipf("skipping: the package index is unreachable, %s could not be installed: %s", set, stderr.String())
	}
	assert.NilError(t, err, "installing %s: %s", set, stderr.String())
	return strings.TrimSpace(string(out))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// schemathesisRows is an Arrow stream of 16 rows (id int64, name utf8).
func schemathesisRows(t *testing.T) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range 16 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}
