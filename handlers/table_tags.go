package handlers

// The tag operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// ListTableTags is POST /v1/table/{id}/tags/list.
func (s *Server) ListTableTags(c echo.Context, _ nsapi.Id, params nsapi.ListTableTagsParams) error {
	// The spec sends no body here, but clients do ({"id":[…]} or null): it is read and checked.
	var req struct {
		Id *[]string `json:"id"`
	}
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "ListTableTags")
}

// GetTableTagVersion is POST /v1/table/{id}/tags/version.
func (s *Server) GetTableTagVersion(c echo.Context, _ nsapi.Id, params nsapi.GetTableTagVersionParams) error {
	var req nsapi.GetTableTagVersionRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "GetTableTagVersion")
}

// CreateTableTag is POST /v1/table/{id}/tags/create.
func (s *Server) CreateTableTag(c echo.Context, _ nsapi.Id, params nsapi.CreateTableTagParams) error {
	var req nsapi.CreateTableTagRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateTableTag")
}

// DeleteTableTag is POST /v1/table/{id}/tags/delete.
func (s *Server) DeleteTableTag(c echo.Context, _ nsapi.Id, params nsapi.DeleteTableTagParams) error {
	var req nsapi.DeleteTableTagRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeleteTableTag")
}

// UpdateTableTag is POST /v1/table/{id}/tags/update.
func (s *Server) UpdateTableTag(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableTagParams) error {
	var req nsapi.UpdateTableTagRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "UpdateTableTag")
}
