package handlers

// The materialized view operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// RefreshMaterializedView is POST /v1/materialized_view/{id}/refresh.
func (s *Server) RefreshMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.RefreshMaterializedViewParams) error {
	var req nsapi.RefreshMaterializedViewRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "RefreshMaterializedView")
}

// CreateMaterializedView is POST /v1/materialized_view/{id}/create.
func (s *Server) CreateMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.CreateMaterializedViewParams) error {
	var req nsapi.CreateMaterializedViewRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateMaterializedView")
}
