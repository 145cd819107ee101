package handlers

// The materialized view operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// RefreshMaterializedView is POST /v1/materialized_view/{id}/refresh.
func (s *Server) RefreshMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.RefreshMaterializedViewParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.RefreshMaterializedViewRequest{})
	return unbacked(c, "RefreshMaterializedView", err)
}

// CreateMaterializedView is POST /v1/materialized_view/{id}/create.
func (s *Server) CreateMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.CreateMaterializedViewParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.CreateMaterializedViewRequest{})
	return unbacked(c, "CreateMaterializedView", err)
}
