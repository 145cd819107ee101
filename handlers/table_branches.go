package handlers

// The branch operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// ListTableBranches is POST /v1/table/{id}/branches/list.
func (s *Server) ListTableBranches(c echo.Context, _ nsapi.Id, params nsapi.ListTableBranchesParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &idOnlyRequest{})
	return unbacked(c, "ListTableBranches", err)
}

// CreateTableBranch is POST /v1/table/{id}/branches/create.
func (s *Server) CreateTableBranch(c echo.Context, _ nsapi.Id, params nsapi.CreateTableBranchParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.CreateTableBranchRequest{})
	return unbacked(c, "CreateTableBranch", err)
}

// DeleteTableBranch is POST /v1/table/{id}/branches/delete.
func (s *Server) DeleteTableBranch(c echo.Context, _ nsapi.Id, params nsapi.DeleteTableBranchParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.DeleteTableBranchRequest{})
	return unbacked(c, "DeleteTableBranch", err)
}
