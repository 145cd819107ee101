// Package buildinfo says which build of lancecat is running: the version, commit and date the
// release build stamps in with -ldflags (Makefile: LDFLAGS), or, for a plain `go build` / `go
// install`, what the Go toolchain recorded (runtime/debug.ReadBuildInfo: the module version and
// the VCS revision and time).
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Set by the linker: -X github.com/lancecat/lancecat/internal/buildinfo.version=v0.3.0 (and commit,
// date). Empty: read from the build info.
var version, commit, date string

// Info is one build's identity.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get is this binary's Info.
func Get() Info { return resolve(version, commit, date, debug.ReadBuildInfo) }

// resolve fills what the linker did not set from the toolchain's build info.
func resolve(version, commit, date string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version // `go install github.com/lancecat/lancecat/cmd/lancecat@v0.3.0`
		}
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Commit == "" {
					in.Commit = s.Value
				}
			case "vcs.time":
				if in.Date == "" {
					in.Date = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && commit == "" && in.Commit != "" {
			in.Commit += "-dirty"
		}
	}
	if in.Version == "" {
		in.Version = "dev"
	}
	if in.Commit == "" {
		in.Commit = "unknown"
	}
	if in.Date == "" {
		in.Date = "unknown"
	}
	return in
}

// ShortCommit is the commit's first 12 characters (what the one-line version shows).
func (i Info) ShortCommit() string {
	c, suffix, _ := strings.Cut(i.Commit, "-")
	if len(c) > 12 {
		c = c[:12]
	}
	if suffix != "" {
		c += "-" + suffix
	}
	return c
}

// semverRE is a semantic version (semver.org 2.0.0), with or without Go's "v".
var semverRE = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Semver is the version as semver without the "v": what the manifests lancecat writes carry in
// writer_version (Lance's format asks for semver there, "2.0.0", "2.0.0-rc.1"). A build without
// a semver version (a plain `go build` of a checkout: "dev") is "0.0.0-dev", with the short
// commit as build metadata when it is known ("0.0.0-dev+feedfacecafe"), so a table written by an
// unreleased binary says so.
func (i Info) Semver() string {
	if m := semverRE.FindString(i.Version); m != "" {
		return strings.TrimPrefix(m, "v")
	}
	v := "0.0.0-dev"
	if c := i.ShortCommit(); c != "" && c != "unknown" {
		if meta := strings.Map(func(r rune) rune {
			if r == '-' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
				return r
			}
			return -1
		}, c); meta != "" {
			v += "+" + meta
		}
	}
	return v
}

// String is the one line `lancecat --version` prints.
func (i Info) String() string {
	return fmt.Sprintf("lancecat %s (commit %s, built %s, %s, %s)", i.Version, i.ShortCommit(), i.Date, i.GoVersion, i.Platform)
}

// Collector is the lancecat_build_info gauge: always 1, the build in its labels (the Prometheus
// convention: join on it to see which version each replica runs).
func (i Info) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "lancecat_build_info",
		Help: "Which lancecat build is running: always 1, the version, commit, build date and Go version in the labels.",
		ConstLabels: prometheus.Labels{"version": i.Version, "commit": i.Commit, "date": i.Date,
			"goversion": i.GoVersion},
	})
	g.Set(1)
	return g
}
