package errors_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

const module = "github.com/lancecat/lancecat/"

// TestLayersBelowTheCatalogImportNoErrors: lance/ and storage/ (and what they import of this
// module) know nothing of spec codes: they return their own sentinels and the table in this
// package translates them. An import of errors/ anywhere under them, directly or through another
// package of the module, fails here (test files included: a test importing errors/ from inside
// lance would be an import cycle anyway).
func TestLayersBelowTheCatalogImportNoErrors(t *testing.T) {
	for _, top := range []string{"lance", "storage"} {
		var dirs []string
		err := filepath.WalkDir(filepath.Join("..", top), func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() != "testdata" {
				dirs = append(dirs, path)
			}
			return err
		})
		assert.NilError(t, err)
		for _, dir := range dirs {
			via := walkImports(t, dir, true, map[string]bool{}, nil)
			assert.Check(t, via == nil, "%s imports %serrors via %s", dir, module, strings.Join(via, " -> "))
		}
	}
}

// walkImports follows dir's imports within the module (with its internal tests' when tests is
// set; an external test package such as lance_test may use the translation); it returns the
// import chain that reaches errors/, or nil.
func walkImports(t *testing.T, dir string, tests bool, seen map[string]bool, chain []string) []string {
	t.Helper()
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	pkg, err := build.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); none {
		return nil
	}
	assert.NilError(t, err)
	imports := pkg.Imports
	if tests {
		imports = append(append([]string{}, imports...), pkg.TestImports...)
	}
	for _, imp := range imports {
		rel, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		next := append(chain[:len(chain):len(chain)], imp)
		if rel == "errors" {
			return next
		}
		if via := walkImports(t, filepath.Join("..", filepath.FromSlash(rel)), false, seen, next); via != nil {
			return via
		}
	}
	return nil
}
