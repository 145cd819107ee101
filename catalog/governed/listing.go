package governed

// Listings filtered to what the caller may see, and orphan adoption.

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// ListNamespaces lists the child namespaces of id the caller may see.
func (g *Catalog) ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	if !g.governed() {
		return g.Inner.ListNamespaces(ctx, id, token, limit)
	}
	// A child of the root may hang from a warehouse rather than the Catalog: no parent there.
	var parent authz.Object
	if !id.IsRoot() {
		parent = authz.NamespaceObject(id)
	}
	return g.filtered(ctx, authz.NamespaceListEntry, token, limit,
		func(tok string, limit int) (catalog.Page, error) {
			return g.Inner.ListNamespaces(ctx, id, tok, limit)
		},
		func(name string) authz.Listed {
			return authz.Listed{Object: authz.NamespaceObject(id.Child(name)), Parent: parent}
		})
}

// ListTables lists the tables of namespace id the caller may see.
func (g *Catalog) ListTables(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	if !g.governed() {
		return g.Inner.ListTables(ctx, id, token, limit)
	}
	parent := authz.NamespaceObject(id) // every table here hangs from id (the Catalog at the root)
	return g.filtered(ctx, authz.TableListEntry, token, limit,
		func(tok string, limit int) (catalog.Page, error) { return g.Inner.ListTables(ctx, id, tok, limit) },
		func(name string) authz.Listed {
			return authz.Listed{Object: authz.TableObject(id.Child(name)), Parent: parent}
		})
}

// ListAllTables lists every table the caller may see (names are the catalog's object ids).
func (g *Catalog) ListAllTables(ctx context.Context, token string, limit int) (catalog.Page, error) {
	if !g.governed() {
		return g.Inner.ListAllTables(ctx, token, limit)
	}
	return g.filtered(ctx, authz.TableListEntry, token, limit,
		func(tok string, limit int) (catalog.Page, error) { return g.Inner.ListAllTables(ctx, tok, limit) },
		func(oid string) authz.Listed {
			id := namespace.SplitID(oid)
			return authz.Listed{Object: authz.TableObject(id), Parent: parentObject(id)}
		})
}

// filtered reads pages from list and keeps the names the caller passes action on, until limit
// names are kept (limit <= 0: all) or the listing is exhausted. The next token is the last name
// returned, so no count of hidden names leaks; it is given only once a further visible name has
// been seen, so pages are never short while more remain and the last page is never empty.
//
// Each entry names the parent it inherits from (authz.Listed), so a caller who reads that parent
// is decided by one check on it; the rest are decided in bulk (authz.FilterListing), and one
// request never asks OpenFGA the same question twice. The catalog is read at least filterReadSize
// names at a time, so a small page over a sparsely visible listing does not cost a round trip per
// name.
func (g *Catalog) filtered(ctx context.Context, action authz.Action, token string, limit int,
	list func(token string, limit int) (catalog.Page, error), object func(string) authz.Listed,
) (catalog.Page, error) {
	p := authz.PrincipalFrom(ctx)
	read := limit
	if read > 0 && read < filterReadSize {
		read = filterReadSize
	}
	var names []string
	for {
		page, err := list(token, read)
		if err != nil {
			return catalog.Page{}, err
		}
		items := make([]authz.Listed, len(page.Names))
		for i, n := range page.Names {
			items[i] = object(n)
		}
		allowed, err := authz.FilterListing(ctx, g.authorizer, p, action, items)
		if err != nil {
			return catalog.Page{}, err
		}
		ok := make(map[authz.Object]bool, len(allowed))
		for _, o := range allowed {
			ok[o] = true
		}
		for i, n := range page.Names {
			if !ok[items[i].Object] {
				continue
			}
			if limit > 0 && len(names) == limit {
				return catalog.Page{Names: names, NextToken: names[limit-1]}, nil // a visible name follows the page
			}
			names = append(names, n)
		}
		if page.NextToken == "" || page.NextToken == token {
			return catalog.Page{Names: names}, nil
		}
		token = page.NextToken
	}
}

// filterReadSize is the fewest names filtered reads from the catalog at once.
const filterReadSize = 100
