package routing

import (
	"testing"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/ident"
)

// TestRouterConformance: the router passes the Catalog conformance suite inside a namespace bound
// to a warehouse (everything lives in the warehouse's root) and at the catalog root.
func TestRouterConformance(t *testing.T) {
	t.Run("BoundWarehouse", func(t *testing.T) {
		catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
			r, _ := testRouter(t)
			return r
		}, catalogtest.Within(ident.ID{"b1"}))
	})
	t.Run("CatalogRoot", func(t *testing.T) {
		catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
			r, _ := testRouter(t)
			return r
		})
	})
}
