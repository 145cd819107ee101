package handlers

import (
	"context"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// Catalog is what the namespace and table metadata operations need from the catalog: the Lance
// directory namespace (namespace.Namespace) or a service above it. Errors are the typed errors of
// errors/; the handlers never choose a status.
type Catalog interface {
	CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string) (map[string]string, error)
	DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error)
	NamespaceExists(ctx context.Context, id ident.ID) error
	ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (namespace.Page, error)
	DropNamespace(ctx context.Context, id ident.ID, mode, behavior string) (map[string]string, error)

	ListTables(ctx context.Context, id ident.ID, token string, limit int) (namespace.Page, error)
	ListAllTables(ctx context.Context, token string, limit int) (namespace.Page, error)
	DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*namespace.Table, error)
	DescribeTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	State(ctx context.Context, t *namespace.Table, opts namespace.DescribeOptions) (*namespace.TableState, error)
	TableExists(ctx context.Context, id ident.ID) error
	DropTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string) (*namespace.Table, error)
	DeregisterTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string) (*namespace.Table, error)
}

var _ Catalog = (*namespace.Namespace)(nil)

func props(p *map[string]string) map[string]string {
	if p == nil {
		return nil
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

func limitOf(l *int) int {
	if l == nil {
		return 0
	}
	return *l
}

func tokenOf(t *string) string {
	if t == nil {
		return ""
	}
	return *t
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// pageToken is the response token: absent on the last page.
func pageToken(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
