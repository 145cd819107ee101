package spec_test

import (
	"go/ast"
	"go/parser"
	"go/token"
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

// TestClientAndServerFromOneSpec: gen/nsclient has no embedded spec to check against the pin, so
// it is checked against gen/nsapi (which has): the same types, but for the server's own.
func TestClientAndServerFromOneSpec(t *testing.T) {
	for _, pair := range [][2]string{
		{"../gen/nsapi/nsapi.gen.go", "../gen/nsclient/nsclient.gen.go"},
		{"../gen/controlapi/controlapi.gen.go", "../gen/controlclient/controlclient.gen.go"},
	} {
		server, client := typeNames(t, pair[0]), typeNames(t, pair[1])
		for _, only := range []string{"EchoRouter", "RegisterHandlersOptions", "ServerInterface", "ServerInterfaceWrapper"} {
			delete(server, only)
		}
		assert.DeepEqual(t, client, server)
	}
}

// typeNames is every top-level type a Go file declares.
func typeNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	assert.NilError(t, err)
	names := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				names[s.(*ast.TypeSpec).Name.Name] = true
			}
		}
	}
	return names
}
