package e2e

import (
	"path/filepath"
	"testing"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestRemoteDoors: the doors the LanceDB remote client calls beyond the Lance Namespace spec
// (issue 34), through the official Node SDK in remote mode (scripts/e2e/sdk-remote-doors.mjs),
// for every SDK version given, on a local root, with authorization off and (with OpenFGA) on.
func TestRemoteDoors(t *testing.T) {
	for _, part := range []string{"lsm", "jobs", "prewarm", "unbacked"} {
		t.Run(part, func(t *testing.T) {
			for _, authorized := range []bool{false, true} {
				name := "authz-off"
				if authorized {
					name = "authz-on"
				}
				t.Run(name, func(t *testing.T) {
					for _, dir := range testenv.SDKs(t) {
						t.Run(filepath.Base(dir), func(t *testing.T) {
							cfg := app.DefaultConfig()
							cfg.LogLevel = "warn"
							root := filepath.Join(t.TempDir(), "root")
							cfg.Root = root
							key := ""
							if authorized {
								key = authorize(t, &cfg, root)
							}
							runDoorsScript(t, serve(t, cfg), dir, key, part)
						})
					}
				})
			}
		})
	}
}

func runDoorsScript(t *testing.T, url, dir, key string, parts ...string) {
	t.Helper()
	var env []string
	if key != "" {
		env = append(env, "LANCECAT_E2E_API_KEY="+key)
	}
	runNodeScript(t, dir, env, "sdk-remote-doors.mjs", append([]string{url}, parts...)...)
}
