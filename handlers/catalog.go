package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
)

// Catalog is what the namespace and table operations need from the catalog (catalog.Catalog): the
// routed catalog, or a service above it. Errors are the typed errors of errors/; the handlers never
// choose a status.
type Catalog = catalog.Catalog

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

// table loads the table a per-table operation works on (404 code 4 when there is none): its
// root is resolved here, once; the operation is a method of the handle.
func (s *Server) table(c echo.Context, op string, id ident.ID) (catalog.Table, error) {
	if s.catalog == nil {
		return nil, notBacked(c, op)
	}
	return s.catalog.LoadTable(c.Request().Context(), id)
}

// pageToken is the response token: absent on the last page.
func pageToken(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
