package routing

// What the trash purge needs of the router (governance.TrashBytes): deleting a dropped table's
// bytes in the root it lived in, whatever is bound there now.

import (
	"context"

	"github.com/lancecat/lancecat/namespace"
)

// DeleteTableBytes deletes every object under location in the root at rootURI ("": the catalog
// root). The warehouse's status is not checked here: the purge decides about quarantine, from the
// binding the table lived under (which may be gone from the router by now).
func (r *Router) DeleteTableBytes(ctx context.Context, rootURI, location string) (namespace.Deleted, error) {
	n := r.opts.Default
	if rootURI != "" {
		var err error
		if n, err = r.Root(ctx, rootURI); err != nil {
			return namespace.Deleted{}, err
		}
	}
	return n.DeleteLocation(ctx, location)
}
