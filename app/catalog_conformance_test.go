package app

import (
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client"
)

// TestCatalogConformanceOverHTTP: a served catalog (the whole stack: routes, request
// conventions, router, namespace) passes the Catalog conformance suite through the generated
// client, so the contract holds on the wire too.
func TestCatalogConformanceOverHTTP(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
		cfg := DefaultConfig()
		cfg.Root = filepath.Join(t.TempDir(), "data")
		c, err := client.New(runServer(t, cfg))
		assert.NilError(t, err)
		return catalogtest.HTTP(c)
	})
}
