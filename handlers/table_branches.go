package handlers

// The branch operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// ListTableBranches is POST /v1/table/{id}/branches/list.
func (s *Server) ListTableBranches(c echo.Context, _ nsapi.Id, params nsapi.ListTableBranchesParams) error {
	// The spec sends no body here, but clients do ({"id":[…]} or null): it is read and checked.
	var req struct {
		Id *[]string `json:"id"`
	}
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "ListTableBranches")
}

// CreateTableBranch is POST /v1/table/{id}/branches/create.
func (s *Server) CreateTableBranch(c echo.Context, _ nsapi.Id, params nsapi.CreateTableBranchParams) error {
	var req nsapi.CreateTableBranchRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateTableBranch")
}

// DeleteTableBranch is POST /v1/table/{id}/branches/delete.
func (s *Server) DeleteTableBranch(c echo.Context, _ nsapi.Id, params nsapi.DeleteTableBranchParams) error {
	var req nsapi.DeleteTableBranchRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeleteTableBranch")
}
