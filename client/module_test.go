package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// The server's dependencies no service importing the client may pull in (issue 33's acceptance):
// the web framework, the browser driver, the object store and authorization SDKs, the OpenAPI
// loader and the code generators.
var serverOnly = []string{
	"github.com/labstack/echo",
	"github.com/chromedp",
	"github.com/minio",
	"github.com/openfga",
	"github.com/getkin/kin-openapi",
	"github.com/oapi-codegen/oapi-codegen",
	"github.com/bufbuild",
	"honnef.co/go/tools",
	"github.com/spf13/cobra",
	"github.com/prometheus",
	"go.opentelemetry.io",
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// The module's own go.mod and go.sum decide, as in a service's build (no workspace; the
	// default -mod=readonly refuses a go.mod that would need updating).
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return string(out)
}

// TestConsumerModule: internal/consumertest is a module of its own that imports only this one
// (as another service would, its replace directive standing in for a version); it builds and vets,
// and none of its packages is one of the server's dependencies or lancecat's server code.
func TestConsumerModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := filepath.Join("internal", "consumertest")
	goCmd(t, dir, "build", "-o", filepath.Join(t.TempDir(), "consumertest"), ".")
	goCmd(t, dir, "vet", "./...")
	deps := strings.Fields(goCmd(t, dir, "list", "-deps", "./..."))
	assert.Assert(t, len(deps) > 100, "go list -deps answered %d packages", len(deps))
	sawClient := false
	for _, dep := range deps {
		for _, bad := range serverOnly {
			assert.Assert(t, !strings.HasPrefix(dep, bad), "the consumer depends on %s (a server dependency)", dep)
		}
		if strings.HasPrefix(dep, "github.com/lancecat/lancecat") {
			assert.Assert(t, strings.HasPrefix(dep, "github.com/lancecat/lancecat/client"), "the consumer depends on lancecat's %s", dep)
			sawClient = sawClient || dep == "github.com/lancecat/lancecat/client"
		}
	}
	assert.Assert(t, sawClient, "the consumer does not import the client")
}

// TestModuleGraph: not even the client module's graph (what `go mod download` fetches for a
// service) names a module of the server's. (arrow-go's graph holds github.com/minio/asm2plan9s and
// c2goasm, assembler tools of no package's; the MinIO SDKs are what may not appear.)
func TestModuleGraph(t *testing.T) {
	serverModules := []string{
		"github.com/labstack/echo", "github.com/chromedp", "github.com/minio/minio-go", "github.com/minio/madmin-go",
		"github.com/openfga", "github.com/getkin/kin-openapi", "github.com/oapi-codegen/oapi-codegen",
		"github.com/bufbuild", "honnef.co/go/tools",
	}
	mods := strings.Fields(goCmd(t, ".", "list", "-m", "-f", "{{.Path}}", "all"))
	assert.Assert(t, len(mods) > 3)
	for _, m := range mods {
		for _, bad := range serverModules {
			assert.Assert(t, !strings.HasPrefix(m, bad), "the client's module graph holds %s", m)
		}
	}
}
