// Package catalog is the one Catalog contract, shaped like apache/iceberg-go's: a Catalog has the
// namespace operations, the table lifecycle (declare, create, register, describe, drop, rename…)
// and LoadTable, which returns a Table handle bound to the root the table lives in, with its
// location and its dataset. The operations on one table's dataset (versions, tags, restore, stats,
// schema changes, and later the data plane) are methods of that handle, so nothing routes twice.
//
// Implementations: the Lance directory namespace over one root (Dir over *namespace.Namespace),
// the router over every root (routing.Router: each call resolves its root once, through Route),
// the governed decorator (catalog/governed), and a client of a remote catalog (catalogtest.HTTP).
// catalogtest is the conformance suite every one of them passes.
//
// Errors are the typed errors of errors/ (nserr); a caller never sees a storage or Lance sentinel.
package catalog

import (
	"context"

	"github.com/lancecat/lancecat/ident"
)

// Catalog is the namespace and table lifecycle operations, and LoadTable. The operations that
// create, destroy or move take options (options.go: force, purge) as parameters; a catalog with
// no rule for an option ignores it.
type Catalog interface {
	CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, opts ...Option) (map[string]string, error)
	DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error)
	NamespaceExists(ctx context.Context, id ident.ID) error
	ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (Page, error)
	DropNamespace(ctx context.Context, id ident.ID, mode, behavior string, opts ...Option) (map[string]string, error)

	ListTables(ctx context.Context, id ident.ID, token string, limit int) (Page, error)
	ListAllTables(ctx context.Context, token string, limit int) (Page, error)
	DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*Entry, error)
	CreateTable(ctx context.Context, id ident.ID, nt NewTable, opts ...Option) (*Entry, uint64, error)
	DescribeTable(ctx context.Context, id ident.ID) (*Entry, error)
	TableExists(ctx context.Context, id ident.ID) error
	DropTable(ctx context.Context, id ident.ID, opts ...Option) (*Entry, error)
	RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...Option) (*Entry, error)
	DeregisterTable(ctx context.Context, id ident.ID, opts ...Option) (*Entry, error)
	RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string, opts ...Option) (*Entry, error)

	// LoadTable finds table id (TableNotFound when there is none) and returns its handle.
	LoadTable(ctx context.Context, id ident.ID) (Table, error)

	// Transactions (namespace/batch.go, namespace/transactions.go). CommitTableVersions
	// publishes staged manifests of several tables of one root all or none (kind is one of
	// namespace.Txn*); a transaction's id is its first table's namespace and its name.
	CommitTableVersions(ctx context.Context, kind string, entries []VersionEntry, opts ...Option) (Transaction, []TableVersion, error)
	DescribeTransaction(ctx context.Context, id ident.ID) (Transaction, error)
	AlterTransaction(ctx context.Context, id ident.ID, actions []TransactionAction) (Transaction, error)
}
