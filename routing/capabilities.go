package routing

import (
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/table"
)

// IndexTypes are the index types create_table_index builds (catalog.IndexTyper): every root is
// a directory namespace of the same build, so they are the namespace's.
func (r *Router) IndexTypes() []string { return table.IndexTypes() }

var _ catalog.IndexTyper = (*Router)(nil)
