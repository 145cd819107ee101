package spec_test

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestClientPackagesAreFreeOfServerCode: the typed clients are for other Go services; importing
// one must not pull in Echo, the generated server interfaces or any of lancecat's server code.
func TestClientPackagesAreFreeOfServerCode(t *testing.T) {
	clients := []string{"github.com/lancecat/lancecat/gen/nsclient", "github.com/lancecat/lancecat/gen/controlclient"}
	for _, pkg := range clients {
		t.Run(pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", pkg)
			cmd.Dir = ".."
			out, err := cmd.CombinedOutput()
			assert.NilError(t, err, "%s", out)
			deps := strings.Fields(string(out))
			assert.Assert(t, len(deps) > 0)
			for _, dep := range deps {
				assert.Assert(t, !strings.Contains(dep, "labstack/echo"), "%s depends on Echo (%s)", pkg, dep)
				assert.Assert(t, !strings.Contains(dep, "getkin/kin-openapi"), "%s depends on the OpenAPI loader (%s)", pkg, dep)
				if strings.HasPrefix(dep, "github.com/lancecat/lancecat") {
					assert.Equal(t, dep, pkg, "%s depends on lancecat's own %s", pkg, dep)
				}
			}
		})
	}
}
