package handlers

// The index operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// CreateTableIndex is POST /v1/table/{id}/create_index.
func (s *Server) CreateTableIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableIndexParams) error {
	var req nsapi.CreateTableIndexRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateTableIndex")
}

// CreateTableScalarIndex is POST /v1/table/{id}/create_scalar_index.
func (s *Server) CreateTableScalarIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableScalarIndexParams) error {
	var req nsapi.CreateTableIndexRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CreateTableScalarIndex")
}

// ListTableIndices is POST /v1/table/{id}/index/list.
func (s *Server) ListTableIndices(c echo.Context, _ nsapi.Id, params nsapi.ListTableIndicesParams) error {
	var req nsapi.ListTableIndicesRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "ListTableIndices")
}

// DescribeTableIndexStats is POST /v1/table/{id}/index/{index_name}/stats.
func (s *Server) DescribeTableIndexStats(c echo.Context, _ nsapi.Id, _ string, params nsapi.DescribeTableIndexStatsParams) error {
	var req nsapi.DescribeTableIndexStatsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DescribeTableIndexStats")
}

// DropTableIndex is POST /v1/table/{id}/index/{index_name}/drop.
func (s *Server) DropTableIndex(c echo.Context, _ nsapi.Id, _ string, params nsapi.DropTableIndexParams) error {
	// The spec sends no body here, but clients do ({"id":[…]} or null): it is read and checked.
	var req struct {
		Id *[]string `json:"id"`
	}
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DropTableIndex")
}
