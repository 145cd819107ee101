package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
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
	CreateTable(ctx context.Context, id ident.ID, nt namespace.NewTable) (*namespace.Table, uint64, error)
	DescribeTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	State(ctx context.Context, t *namespace.Table, opts namespace.DescribeOptions) (*namespace.TableState, error)
	TableExists(ctx context.Context, id ident.ID) error
	DropTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string) (*namespace.Table, error)
	DeregisterTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string) (*namespace.Table, error)

	TableOps
}

// TableOps are the operations on one table's dataset, through the table layer. The table is
// what DescribeTable returned; branch "" is the main branch.
type TableOps interface {
	RestoreTable(ctx context.Context, t *namespace.Table, branch string, version int64) (uint64, error)
	TableStats(ctx context.Context, t *namespace.Table, branch string) (lance.TableStats, error)

	ListTableVersions(ctx context.Context, t *namespace.Table, q namespace.VersionQuery) ([]namespace.TableVersion, string, error)
	DescribeTableVersion(ctx context.Context, t *namespace.Table, branch string, version *int64) (namespace.TableVersion, error)
	CreateTableVersion(ctx context.Context, t *namespace.Table, nv namespace.NewTableVersion) (namespace.TableVersion, error)
	DeleteTableVersions(ctx context.Context, t *namespace.Table, branch string, ranges []lance.VersionRange) (int, error)

	ListTags(ctx context.Context, t *namespace.Table, token string, limit int) ([]lance.Tag, string, error)
	GetTag(ctx context.Context, t *namespace.Table, name string) (lance.Tag, error)
	CreateTag(ctx context.Context, t *namespace.Table, name string, version int64, branch string) (lance.Tag, error)
	UpdateTag(ctx context.Context, t *namespace.Table, name string, version int64, branch string) (lance.Tag, error)
	DeleteTag(ctx context.Context, t *namespace.Table, name string) error

	UpdateSchemaMetadata(ctx context.Context, t *namespace.Table, branch string, updates lance.MetadataUpdate) (map[string]string, error)
	UpdateFieldMetadata(ctx context.Context, t *namespace.Table, branch string, updates []namespace.FieldMetadataUpdate) (uint64, map[string]map[string]string, error)
	DropColumns(ctx context.Context, t *namespace.Table, branch string, paths []string) (uint64, error)
	AlterColumns(ctx context.Context, t *namespace.Table, branch string, alts []lance.ColumnAlteration) (uint64, error)
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

// table finds the table a per-table operation works on (404 code 4 when there is none).
func (s *Server) table(c echo.Context, op string, id ident.ID) (*namespace.Table, error) {
	if s.catalog == nil {
		return nil, notBacked(c, op)
	}
	return s.catalog.DescribeTable(c.Request().Context(), id)
}

// pageToken is the response token: absent on the last page.
func pageToken(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
