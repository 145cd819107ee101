package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// everyCommand lists the command paths of the whole tree (without the root), as typed.
func everyCommand(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			out = append(out, p)
			walk(sub, p)
		}
	}
	var o, e bytes.Buffer
	walk(newRootCmd(&o, &e), nil)
	assert.Assert(t, len(out) > 15, "the tree has its commands: %v", out)
	return out
}

// TestEveryCommandHasHelp: --help on every command answers on stdout with exit 0 (issue 19).
func TestEveryCommandHasHelp(t *testing.T) {
	for _, path := range everyCommand(t) {
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, run(append(path, "--help"), &out, &errOut), 0, errOut.String())
			assert.Check(t, is.Contains(out.String(), "Usage:"))
		})
	}
}

// TestMisuseIsOneLineThenUsage: an unknown flag, a missing or extra argument, a bad value: exit 2,
// stderr's first line names the command and what is wrong, then the usage; nothing on stdout.
func TestMisuseIsOneLineThenUsage(t *testing.T) {
	for _, path := range everyCommand(t) {
		if path[0] == "completion" {
			continue // cobra's own
		}
		t.Run(strings.Join(path, " ")+" --bad-flag", func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, run(append(path, "--bad-flag"), &out, &errOut), 2)
			first, rest, _ := strings.Cut(errOut.String(), "\n")
			assert.Equal(t, first, "lancecat "+strings.Join(path, " ")+": unknown flag: --bad-flag")
			assert.Check(t, is.Contains(rest, "Usage:"))
			assert.Equal(t, out.String(), "")
		})
	}
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "lancecat: a command is required"},
		{[]string{"frobnicate"}, `lancecat: unknown command "frobnicate" for "lancecat"`},
		{[]string{"apikey"}, "lancecat apikey: a command is required"},
		{[]string{"apikey", "frob"}, `lancecat apikey: unknown command "frob"`},
		{[]string{"apikey", "create", "--root", root}, "lancecat apikey create: --principal is required (user:<id>)"},
		{[]string{"apikey", "create", "--root", root, "--principal", "bob"}, "lancecat apikey create: --principal: "},
		{[]string{"apikey", "revoke", "--root", root}, "lancecat apikey revoke: missing the key id"},
		{[]string{"apikey", "revoke", "--root", root, "a", "b"}, `lancecat apikey revoke: unexpected argument "b"`},
		{[]string{"apikey", "list", "extra"}, `lancecat apikey list: unexpected argument "extra"`},
		{[]string{"trash", "purge", "--limit", "-1"}, "lancecat trash purge: --limit must be 0 (all) or more, not -1"},
		{[]string{"trash", "purge", "--limit", "many"}, `lancecat trash purge: invalid argument "many" for "--limit"`},
		{[]string{"admin", "estate", "grant"}, "lancecat admin estate grant: missing the subject"},
		{[]string{"admin", "estate", "grant", "user:*"}, "lancecat admin estate grant: everyone (user:*) cannot be an estate admin"},
		{[]string{"dataset", "inspect"}, "lancecat dataset inspect: missing the dataset's URI"},
		{[]string{"dataset", "import", "./t.lance"}, "lancecat dataset import: --from is required"},
		{[]string{"dataset", "import", "./t.lance", "--from", "x.arrow", "--mode", "merge"}, `lancecat dataset import: unknown --mode "merge"`},
		{[]string{"dataset", "scan", "./t.lance", "--format", "csv"}, `lancecat dataset scan: --format "csv": json or arrow`},
		{[]string{"serve", "extra"}, `lancecat serve: unexpected argument "extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, run(tc.args, &out, &errOut), 2, errOut.String())
			first, rest, _ := strings.Cut(errOut.String(), "\n")
			assert.Check(t, strings.HasPrefix(first, tc.want), "first line %q, want it to start with %q", first, tc.want)
			assert.Check(t, is.Contains(rest, "Usage:"))
			assert.Equal(t, out.String(), "")
		})
	}
}

// TestFlagsAfterArguments: the issue's own example — flags after the dataset path — just works.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	uri := filepath.Join(dir, "t.lance")
	file := filepath.Join(dir, "a.arrow")
	writeArrow(t, file, 0, 10, true)
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"dataset", "import", uri, "--from", file}, &out, &errOut), 0, errOut.String())
	assert.Equal(t, out.String(), "append: version 1, 10 rows in 1 fragments\n")
	out.Reset()
	assert.Equal(t, run([]string{"dataset", "inspect", uri, "--json"}, &out, &errOut), 0, errOut.String())
	assert.Check(t, is.Contains(out.String(), `"version": 1`))
}

// TestCompletionScripts: shell completion generates for every shell cobra knows.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errOut bytes.Buffer
		assert.Equal(t, run([]string{"completion", shell}, &out, &errOut), 0, errOut.String())
		assert.Check(t, is.Contains(out.String(), "lancecat"), shell)
	}
}
