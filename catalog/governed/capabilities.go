package governed

import "github.com/lancecat/lancecat/catalog"

// IndexTypes are the inner catalog's (catalog.IndexTyper): the decorator builds no index itself.
func (g *Catalog) IndexTypes() []string { return catalog.IndexTypes(g.Inner) }

var _ catalog.IndexTyper = (*Catalog)(nil)
