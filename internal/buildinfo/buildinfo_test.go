package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gotest.tools/v3/assert"
)

func TestResolve(t *testing.T) {
	vcs := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		read                  func() (*debug.BuildInfo, bool)
		want                  Info
	}{
		{"ldflags win", "v1.2.3", "abc", "2026-12-03T00:00:00Z",
			vcs("v0.0.1", "vcs.revision", "zzz", "vcs.time", "x", "vcs.modified", "true"),
			Info{Version: "v1.2.3", Commit: "abc", Date: "2026-12-03T00:00:00Z", GoVersion: "go1.99"}},
		{"go build in a checkout", "", "", "",
			vcs("(devel)", "vcs.revision", "0123456789abcdef", "vcs.time", "2026-12-01T10:00:00Z", "vcs.modified", "true"),
			Info{Version: "dev", Commit: "0123456789abcdef-dirty", Date: "2026-12-01T10:00:00Z", GoVersion: "go1.99"}},
		{"go install @version", "", "", "", vcs("v0.4.0"),
			Info{Version: "v0.4.0", Commit: "unknown", Date: "unknown", GoVersion: "go1.99"}},
		{"nothing known", "", "", "", none,
			Info{Version: "dev", Commit: "unknown", Date: "unknown", GoVersion: runtime.Version()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.version, tc.commit, tc.date, tc.read)
			tc.want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			assert.DeepEqual(t, got, tc.want)
		})
	}
	assert.Equal(t, Info{Commit: "0123456789abcdef-dirty"}.ShortCommit(), "0123456789ab-dirty")
}

func TestCollector(t *testing.T) {
	in := Info{Version: "v1.2.3", Commit: "abc", Date: "d", GoVersion: "go1.99"}
	reg := prometheus.NewRegistry()
	reg.MustRegister(in.Collector())
	mfs, err := reg.Gather()
	assert.NilError(t, err)
	assert.Equal(t, len(mfs), 1)
	assert.Equal(t, mfs[0].GetName(), "lancecat_build_info")
	m := mfs[0].GetMetric()[0]
	assert.Equal(t, m.GetGauge().GetValue(), 1.0)
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	assert.DeepEqual(t, labels, map[string]string{"commit": "abc", "date": "d", "goversion": "go1.99", "version": "v1.2.3"})
}

// TestSemver: what writer_version carries, for each kind of version a build may have.
func TestSemver(t *testing.T) {
	for _, tc := range []struct{ version, commit, want string }{
		{"v0.3.0", "feedfacecafebeef", "0.3.0"},
		{"0.3.0", "", "0.3.0"},
		{"v1.2.3-rc.1", "x", "1.2.3-rc.1"},
		{"v1.2.3-rc.1+build.7", "x", "1.2.3-rc.1+build.7"},
		{"v0.0.0-20261203120000-abcdef123456", "x", "0.0.0-20261203120000-abcdef123456"}, // a Go pseudo-version
		{"dev", "feedfacecafebeef", "0.0.0-dev+feedfacecafe"},
		{"dev", "feedfacecafebeef-dirty", "0.0.0-dev+feedfacecafe-dirty"},
		{"dev", "unknown", "0.0.0-dev"},
		{"v1.2", "abc", "0.0.0-dev+abc"},    // not semver: not passed off as one
		{"v01.2.3", "abc", "0.0.0-dev+abc"}, // leading zero
		{"dev", "ab/c d", "0.0.0-dev+abcd"}, // build metadata keeps semver's characters only
	} {
		got := Info{Version: tc.version, Commit: tc.commit}.Semver()
		assert.Equal(t, got, tc.want, "%q %q", tc.version, tc.commit)
		assert.Assert(t, semverRE.MatchString(got), got)
	}
}

// TestLdflagsStampTheBuild: the -X flags the Makefile passes reach Get (a real build and run).
func TestLdflagsStampTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "stamped")
	pkg := "github.com/lancecat/lancecat/internal/buildinfo"
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X "+pkg+".version=v9.8.7 -X "+pkg+".commit=feedfacecafebeef -X "+pkg+".date=2026-12-03T12:00:00Z", "./testdata/stamp")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	out, err = exec.Command(bin).Output()
	assert.NilError(t, err)
	assert.Equal(t, string(out), "lancecat v9.8.7 (commit feedfacecafe, built 2026-12-03T12:00:00Z, "+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")\n"+
		"writer_version lancecat 9.8.7")
}
