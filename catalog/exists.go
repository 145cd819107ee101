package catalog

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// TableExistsAt answers whether table id exists in c (nil, or c's TableNotFound) and, when version
// is set, has that version. A table without the version does not exist at it: TableNotFound
// (404 code 4), the answer table_exists gives for a missing table, with the catalog's own words
// for what is missing, and never TableVersionNotFound, which a client of table_exists does not
// read as "no".
//
// It is the catalog's rule, not the transport's nor a lifecycle rule (catalog/governed has none
// for reads), and it holds for every implementation (the directory namespace, the router, a
// remote catalog): it is written once, over the contract.
func TableExistsAt(ctx context.Context, c Catalog, id ident.ID, version *int64) error {
	if version == nil {
		return c.TableExists(ctx, id)
	}
	t, err := c.LoadTable(ctx, id)
	if err != nil {
		return err
	}
	if _, err := t.State(ctx, DescribeOptions{Version: version}); err != nil {
		if nserr.Is(err, nserr.ErrTableVersionNotFound) {
			return nserr.Wrap(nserr.TableNotFound, err, err.Error())
		}
		return err
	}
	return nil
}
