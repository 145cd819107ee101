package routing

// The Router as the request's catalog.Catalog: every operation resolves its namespace's root
// once (a table's: its parent's) and runs in the directory namespace there; what spans roots is
// decided here (the listings at the root, a create refused at the top level when warehouses are
// required, the unbinding of a dropped bound namespace, a rename or a batch refused across
// roots). The operations on one table are the methods of the handle LoadTable returns, bound to
// its root: they route no more. A lifecycle call's options (catalog.Option) go on to the root
// unchanged.

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// Resolve is the directory namespace of the root namespace ns lives in: the catalog's own root
// for the root namespace and for every namespace whose top-level one is unbound, else the root of
// the warehouse it is bound to, once its warehouse is found active (403 when it is deactivated or
// gone, 503 when the control root cannot be read).
func (r *Router) Resolve(ctx context.Context, ns ident.ID) (*namespace.Namespace, error) {
	n, _, err := r.route(ctx, ns)
	return n, err
}

// table is the root of table id (its namespace's).
func (r *Router) table(ctx context.Context, id ident.ID) (*namespace.Namespace, error) {
	return r.Resolve(ctx, id.Parent())
}

// CreateNamespace refuses an unbound top-level namespace when warehouses are required; a bound
// one already exists in its warehouse (ExistOk and Overwrite behave there).
func (r *Router) CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, opts ...catalog.Option) (map[string]string, error) {
	n, b, err := r.route(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(id) == 1 && b == nil && r.opts.RequireWarehouse {
		return nil, nserr.InvalidInputf("top-level namespace %s must be created in a warehouse: POST /v1/warehouses/{warehouse_id}/namespaces", id[0])
	}
	return n.CreateNamespace(ctx, id, props, mode, opts...)
}

func (r *Router) DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error) {
	n, err := r.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.DescribeNamespace(ctx, id)
}

func (r *Router) NamespaceExists(ctx context.Context, id ident.ID) error {
	n, err := r.Resolve(ctx, id)
	if err != nil {
		return err
	}
	return n.NamespaceExists(ctx, id)
}

// ListNamespaces lists the children of id. At the root they are the catalog root's top-level
// namespaces and the bound ones, merged by name; a bound name shadows one left in the catalog
// root.
func (r *Router) ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	if len(id) == 0 {
		return r.listRoot(ctx, token, limit)
	}
	n, err := r.Resolve(ctx, id)
	if err != nil {
		return catalog.Page{}, err
	}
	return n.ListNamespaces(ctx, id, token, limit)
}

func (r *Router) listRoot(ctx context.Context, token string, limit int) (catalog.Page, error) {
	bound, err := r.boundNames(ctx)
	if err != nil {
		return catalog.Page{}, err
	}
	page, err := r.opts.Default.ListNamespaces(ctx, nil, token, limit)
	if err != nil {
		return catalog.Page{}, err
	}
	return mergePage(page, bound, token, limit), nil
}

// DropNamespace drops a namespace; a dropped top-level namespace loses its binding.
func (r *Router) DropNamespace(ctx context.Context, id ident.ID, mode, behavior string, opts ...catalog.Option) (map[string]string, error) {
	n, b, err := r.route(ctx, id)
	if err != nil {
		return nil, err
	}
	props, err := n.DropNamespace(ctx, id, mode, behavior, opts...)
	if err != nil {
		return nil, err
	}
	if len(id) == 1 && b != nil {
		if err := r.unbind(ctx, *b); err != nil {
			return nil, err
		}
	}
	return props, nil
}

func (r *Router) ListTables(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	n, err := r.Resolve(ctx, id)
	if err != nil {
		return catalog.Page{}, err
	}
	return n.ListTables(ctx, id, token, limit)
}

// ListAllTables spans every root (listAllTables).
func (r *Router) ListAllTables(ctx context.Context, token string, limit int) (catalog.Page, error) {
	return r.listAllTables(ctx, token, limit)
}

func (r *Router) DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*catalog.Entry, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.DeclareTable(ctx, id, location, props)
}

func (r *Router) CreateTable(ctx context.Context, id ident.ID, nt catalog.NewTable, opts ...catalog.Option) (*catalog.Entry, uint64, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return n.CreateTable(ctx, id, nt, opts...)
}

func (r *Router) DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.DescribeTable(ctx, id)
}

func (r *Router) TableExists(ctx context.Context, id ident.ID) error {
	n, err := r.table(ctx, id)
	if err != nil {
		return err
	}
	return n.TableExists(ctx, id)
}

func (r *Router) DropTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.DropTable(ctx, id, opts...)
}

func (r *Router) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...catalog.Option) (*catalog.Entry, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.RegisterTable(ctx, id, location, mode, props, opts...)
}

func (r *Router) DeregisterTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.DeregisterTable(ctx, id, opts...)
}

// RenameTable renames a table within its root; a table's bytes live in one bucket, so a rename
// into a namespace of another root is refused.
func (r *Router) RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string, opts ...catalog.Option) (*catalog.Entry, error) {
	from, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	dest := newNamespace
	if dest == nil {
		dest = id.Parent()
	}
	to, _, err := r.route(ctx, dest)
	if err != nil {
		return nil, err
	}
	if from != to {
		return nil, nserr.InvalidInputf("table %s cannot be renamed into namespace %s: they live in different warehouses, and a rename never moves bytes",
			id.Join(r.opts.Delimiter), dest.Join(r.opts.Delimiter))
	}
	return from.RenameTable(ctx, id, newNamespace, newName, opts...)
}

func (r *Router) LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error) {
	n, err := r.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.LoadTable(ctx, id)
}

// CommitTableVersions runs in the root of the entries' tables, which must be one: the
// transaction's record and claims live in that root's bucket, and no atomic primitive spans two
// buckets, so a batch naming tables of two roots is refused before anything is written.
func (r *Router) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	if len(entries) == 0 {
		return catalog.Transaction{}, nil, nserr.InvalidInputf("a batch needs at least one entry")
	}
	var root *namespace.Namespace
	for i, e := range entries {
		n, err := r.table(ctx, e.Table)
		if err != nil {
			return catalog.Transaction{}, nil, err
		}
		switch {
		case root == nil:
			root = n
		case root != n:
			return catalog.Transaction{}, nil, nserr.InvalidInputf(
				"entries[%d]: table %s is in another warehouse root than entries[0]'s table %s: a batch commits atomically only within one root (no atomic primitive spans two buckets); split it per warehouse",
				i, e.Table, entries[0].Table)
		}
	}
	return root.CommitTableVersions(ctx, kind, entries, opts...)
}

// DescribeTransaction runs in the root of the transaction's namespace.
func (r *Router) DescribeTransaction(ctx context.Context, id ident.ID) (catalog.Transaction, error) {
	n, err := r.Resolve(ctx, id.Parent())
	if err != nil {
		return catalog.Transaction{}, err
	}
	return n.DescribeTransaction(ctx, id)
}

// AlterTransaction runs in the root of the transaction's namespace.
func (r *Router) AlterTransaction(ctx context.Context, id ident.ID, actions []catalog.TransactionAction) (catalog.Transaction, error) {
	n, err := r.Resolve(ctx, id.Parent())
	if err != nil {
		return catalog.Transaction{}, err
	}
	return n.AlterTransaction(ctx, id, actions)
}
