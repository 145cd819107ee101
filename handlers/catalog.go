package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
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

// tableRequest decodes the request of a per-table operation into req (decodeRequest) and loads
// the table it names (404 code 4 when there is none): its root is resolved here, once; the
// operation is a method of the handle.
func (s *Server) tableRequest(c echo.Context, op string, delimiter *string, req any) (catalog.Table, error) {
	id, err := s.decodeRequestFor(c, op, delimiter, req)
	if err = s.backed(c, op, err); err != nil {
		return nil, err
	}
	return s.catalog.LoadTable(c.Request().Context(), id)
}

// idOnlyRequest is the body of the operations the spec gives none: clients send one anyway
// ({"id":[…]} or null), so it is read and its id checked against the path's.
type idOnlyRequest struct {
	Id *[]string `json:"id"`
}

// pageToken is the response token: absent on the last page.
func pageToken(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
