package handlers

// The table version operations (the external manifest store).

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// ListTableVersions is POST /v1/table/{id}/version/list.
func (s *Server) ListTableVersions(c echo.Context, _ nsapi.Id, params nsapi.ListTableVersionsParams) error {
	// The spec sends no body here, but clients do ({"id":[…]} or null): it is read and checked.
	var req struct {
		Id *[]string `json:"id"`
	}
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "ListTableVersions")
}

// CreateTableVersion is POST /v1/table/{id}/version/create.
func (s *Server) CreateTableVersion(c echo.Context, _ nsapi.Id, params nsapi.CreateTableVersionParams) error {
	var req nsapi.CreateTableVersionRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateTableVersion")
}

// DescribeTableVersion is POST /v1/table/{id}/version/describe.
func (s *Server) DescribeTableVersion(c echo.Context, _ nsapi.Id, params nsapi.DescribeTableVersionParams) error {
	var req nsapi.DescribeTableVersionRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DescribeTableVersion")
}

// BatchDeleteTableVersions is POST /v1/table/{id}/version/delete.
func (s *Server) BatchDeleteTableVersions(c echo.Context, _ nsapi.Id, params nsapi.BatchDeleteTableVersionsParams) error {
	var req nsapi.BatchDeleteTableVersionsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "BatchDeleteTableVersions")
}

// BatchCreateTableVersions is POST /v1/table/version/batch-create.
func (s *Server) BatchCreateTableVersions(c echo.Context, params nsapi.BatchCreateTableVersionsParams) error {
	var req nsapi.BatchCreateTableVersionsRequest
	if err := s.checkDelimiter(params.Delimiter); err != nil {
		return err
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	return notBacked(c, "BatchCreateTableVersions")
}

// BatchCommitTables is POST /v1/table/batch-commit.
func (s *Server) BatchCommitTables(c echo.Context, params nsapi.BatchCommitTablesParams) error {
	var req nsapi.BatchCommitTablesRequest
	if err := s.checkDelimiter(params.Delimiter); err != nil {
		return err
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	return notBacked(c, "BatchCommitTables")
}
