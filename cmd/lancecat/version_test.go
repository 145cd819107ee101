package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/buildinfo"
)

// TestVersionCommand: `lancecat version` (text and --json) and `lancecat --version` say the build.
func TestVersionCommand(t *testing.T) {
	in := buildinfo.Get()
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"version"}, &out, &errOut), 0, errOut.String())
	assert.Check(t, is.Contains(out.String(), "lancecat "+in.Version+"\n"))
	assert.Check(t, is.Contains(out.String(), "commit:   "+in.Commit))
	assert.Check(t, is.Contains(out.String(), "go:       "+runtime.Version()))

	out.Reset()
	assert.Equal(t, run([]string{"version", "--json"}, &out, &errOut), 0, errOut.String())
	var got buildinfo.Info
	assert.NilError(t, json.Unmarshal(out.Bytes(), &got))
	assert.DeepEqual(t, got, in)

	out.Reset()
	assert.Equal(t, run([]string{"--version"}, &out, &errOut), 0, errOut.String())
	assert.Equal(t, out.String(), in.String()+"\n")

	out.Reset()
	assert.Equal(t, run([]string{"version", "extra"}, &out, &errOut), 2)
}

// TestMakeRelease: `make release` writes static linux/amd64 and linux/arm64 binaries stamped with
// the version, and a SHA256SUMS that matches them.
func TestMakeRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds lancecat twice")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dist := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "release", "DIST="+dist, "VERSION=v0.0.0-releasetest")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))

	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	assert.NilError(t, err)
	want := map[string]elf.Machine{
		"lancecat-v0.0.0-releasetest-linux-amd64": elf.EM_X86_64,
		"lancecat-v0.0.0-releasetest-linux-arm64": elf.EM_AARCH64,
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		assert.Assert(t, ok, sc.Text())
		machine, known := want[name]
		assert.Assert(t, known, "unexpected %s in SHA256SUMS", name)
		seen[name] = true
		b, err := os.ReadFile(filepath.Join(dist, name))
		assert.NilError(t, err)
		h := sha256.Sum256(b)
		assert.Equal(t, hex.EncodeToString(h[:]), sum, name)

		f, err := elf.Open(filepath.Join(dist, name))
		assert.NilError(t, err)
		assert.Equal(t, f.Machine, machine, name)
		for _, p := range f.Progs {
			assert.Check(t, p.Type != elf.PT_INTERP, "%s is dynamically linked", name)
		}
		f.Close()
	}
	assert.Equal(t, len(seen), len(want), string(sums))

	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		out, err := exec.Command(filepath.Join(dist, "lancecat-v0.0.0-releasetest-linux-amd64"), "--version").Output()
		assert.NilError(t, err)
		assert.Check(t, is.Contains(string(out), "lancecat v0.0.0-releasetest (commit "))
		assert.Check(t, !strings.Contains(string(out), "commit unknown"), string(out))
	}
}
