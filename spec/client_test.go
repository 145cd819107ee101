package spec_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestClientPackagesAreFreeOfServerCode: the typed clients are for other Go services; importing
// one must not pull in Echo, the generated server interfaces or any of lancecat's server code.
func TestClientPackagesAreFreeOfServerCode(t *testing.T) {
	clients := []string{"github.com/lancecat/lancecat/client/nsclient", "github.com/lancecat/lancecat/client/controlclient"}
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

// TestClientAndServerFromOneSpec: client/nsclient has no embedded spec to check against the pin, so
// it is checked against gen/nsapi (which has): every model the server package declares, declared
// the same in the client package. The client is generated once, into the client packages only: the
// server packages hold models, the Echo interface and the embedded spec, and no client machinery
// (they used to carry a second typed client, ~25,000 generated lines nobody should import).
func TestClientAndServerFromOneSpec(t *testing.T) {
	serverOnly := []string{"EchoRouter", "RegisterHandlersOptions", "ServerInterface", "ServerInterfaceWrapper"}
	for _, pair := range [][2]string{
		{"../gen/nsapi/nsapi.gen.go", "../client/nsclient/nsclient.gen.go"},
		{"../gen/controlapi/controlapi.gen.go", "../client/controlclient/controlclient.gen.go"},
	} {
		t.Run(pair[0], func(t *testing.T) {
			server, client := typeDecls(t, pair[0]), typeDecls(t, pair[1])
			for _, only := range serverOnly {
				_, ok := server[only]
				assert.Assert(t, ok, "%s lacks the server type %s", pair[0], only)
				delete(server, only)
			}
			// The client's own types: the client, its options, and one response wrapper per operation.
			models := map[string]string{}
			var machinery []string
			for name, decl := range client {
				if clientMachinery(name, decl) {
					machinery = append(machinery, name)
					continue
				}
				models[name] = decl
			}
			assert.Assert(t, len(machinery) > 0, "%s has no client", pair[1])
			for name, decl := range server {
				assert.Assert(t, !clientMachinery(name, decl), "%s generates client code (%s): client: false in its codegen config", pair[0], name)
			}
			assert.DeepEqual(t, models, server)
		})
	}
}

// clientMachinery: a type oapi-codegen's client template emits (not a model of the spec).
func clientMachinery(name, decl string) bool {
	switch name {
	case "Client", "ClientInterface", "ClientOption", "ClientWithResponses", "ClientWithResponsesInterface", "HttpRequestDoer", "RequestEditorFn":
		return true
	}
	// the <Op>Response wrapper of each call
	return strings.Contains(strings.Join(strings.Fields(decl), " "), "HTTPResponse *http.Response")
}

// typeDecls is every top-level type a Go file declares, by name, with its declaration as printed.
func typeDecls(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	assert.NilError(t, err)
	decls := map[string]string{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				var b bytes.Buffer
				assert.NilError(t, printer.Fprint(&b, fset, ts))
				decls[ts.Name.Name] = b.String()
			}
		}
	}
	return decls
}
