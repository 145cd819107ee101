package catalog

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// Resolver finds the Catalog that holds namespace ns (the root namespace: the catalog's own
// root, which also answers what spans every root: the listing of the top-level namespaces and
// of every table). Resolve is where routing refuses a request (a quarantined warehouse, an
// unreadable control root); it is called once per operation.
type Resolver interface {
	Resolve(ctx context.Context, ns ident.ID) (Catalog, error)
}

// Route is the Catalog over every root r resolves to: each operation resolves its namespace
// once (a table's: its parent) and runs in the Catalog found there. The operations on one table
// are the methods of the handle LoadTable returns, bound to its root: they route no more.
func Route(r Resolver) Catalog { return routed{r} }

type routed struct{ r Resolver }

// table resolves the root of table id (its namespace's).
func (c routed) table(ctx context.Context, id ident.ID) (Catalog, error) {
	return c.r.Resolve(ctx, id.Parent())
}

func (c routed) CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string) (map[string]string, error) {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.CreateNamespace(ctx, id, props, mode)
}

func (c routed) DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error) {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DescribeNamespace(ctx, id)
}

func (c routed) NamespaceExists(ctx context.Context, id ident.ID) error {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return err
	}
	return in.NamespaceExists(ctx, id)
}

func (c routed) ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (namespace.Page, error) {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return namespace.Page{}, err
	}
	return in.ListNamespaces(ctx, id, token, limit)
}

func (c routed) DropNamespace(ctx context.Context, id ident.ID, mode, behavior string) (map[string]string, error) {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DropNamespace(ctx, id, mode, behavior)
}

func (c routed) ListTables(ctx context.Context, id ident.ID, token string, limit int) (namespace.Page, error) {
	in, err := c.r.Resolve(ctx, id)
	if err != nil {
		return namespace.Page{}, err
	}
	return in.ListTables(ctx, id, token, limit)
}

func (c routed) ListAllTables(ctx context.Context, token string, limit int) (namespace.Page, error) {
	in, err := c.r.Resolve(ctx, nil)
	if err != nil {
		return namespace.Page{}, err
	}
	return in.ListAllTables(ctx, token, limit)
}

func (c routed) DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DeclareTable(ctx, id, location, props)
}

func (c routed) CreateTable(ctx context.Context, id ident.ID, nt namespace.NewTable) (*namespace.Table, uint64, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return in.CreateTable(ctx, id, nt)
}

func (c routed) DescribeTable(ctx context.Context, id ident.ID) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DescribeTable(ctx, id)
}

func (c routed) TableExists(ctx context.Context, id ident.ID) error {
	in, err := c.table(ctx, id)
	if err != nil {
		return err
	}
	return in.TableExists(ctx, id)
}

func (c routed) DropTable(ctx context.Context, id ident.ID) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DropTable(ctx, id)
}

func (c routed) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.RegisterTable(ctx, id, location, mode, props)
}

func (c routed) DeregisterTable(ctx context.Context, id ident.ID) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.DeregisterTable(ctx, id)
}

// RenameTable runs in the source's root; that Catalog decides about a destination elsewhere.
func (c routed) RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string) (*namespace.Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.RenameTable(ctx, id, newNamespace, newName)
}

func (c routed) LoadTable(ctx context.Context, id ident.ID) (Table, error) {
	in, err := c.table(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.LoadTable(ctx, id)
}

// Rooted is a Catalog that knows the root it runs in (the directory namespace there): what a
// routed batch compares to keep one transaction in one root.
type Rooted interface {
	RootNamespace() *namespace.Namespace
}

// CommitTableVersions runs in the root of the entries' tables, which must be one: the
// transaction's record and claims live in that root's bucket, and no atomic primitive spans two
// buckets, so a batch naming tables of two roots is refused before anything is written.
func (c routed) CommitTableVersions(ctx context.Context, kind string, entries []namespace.VersionEntry) (namespace.Transaction, []namespace.TableVersion, error) {
	if len(entries) == 0 {
		return namespace.Transaction{}, nil, nserr.InvalidInputf("a batch needs at least one entry")
	}
	var first Catalog
	var root *namespace.Namespace
	for i, e := range entries {
		in, err := c.table(ctx, e.Table)
		if err != nil {
			return namespace.Transaction{}, nil, err
		}
		r, ok := in.(Rooted)
		if !ok {
			if first == nil {
				first = in
			}
			continue
		}
		switch {
		case first == nil:
			first, root = in, r.RootNamespace()
		case root != r.RootNamespace():
			return namespace.Transaction{}, nil, nserr.InvalidInputf(
				"entries[%d]: table %s is in another warehouse root than entries[0]'s table %s: a batch commits atomically only within one root (no atomic primitive spans two buckets); split it per warehouse",
				i, e.Table, entries[0].Table)
		}
	}
	return first.CommitTableVersions(ctx, kind, entries)
}

// DescribeTransaction runs in the root of the transaction's namespace.
func (c routed) DescribeTransaction(ctx context.Context, id ident.ID) (namespace.Transaction, error) {
	in, err := c.r.Resolve(ctx, id.Parent())
	if err != nil {
		return namespace.Transaction{}, err
	}
	return in.DescribeTransaction(ctx, id)
}

// AlterTransaction runs in the root of the transaction's namespace.
func (c routed) AlterTransaction(ctx context.Context, id ident.ID, actions []namespace.TransactionAction) (namespace.Transaction, error) {
	in, err := c.r.Resolve(ctx, id.Parent())
	if err != nil {
		return namespace.Transaction{}, err
	}
	return in.AlterTransaction(ctx, id, actions)
}
