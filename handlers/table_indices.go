package handlers

// The index operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// CreateTableIndex is POST /v1/table/{id}/create_index.
func (s *Server) CreateTableIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableIndexParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.CreateTableIndexRequest{})
	return unbacked(c, "CreateTableIndex", err)
}

// CreateTableScalarIndex is POST /v1/table/{id}/create_scalar_index.
func (s *Server) CreateTableScalarIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableScalarIndexParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.CreateTableIndexRequest{})
	return unbacked(c, "CreateTableScalarIndex", err)
}

// ListTableIndices is POST /v1/table/{id}/index/list.
func (s *Server) ListTableIndices(c echo.Context, _ nsapi.Id, params nsapi.ListTableIndicesParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.ListTableIndicesRequest{})
	return unbacked(c, "ListTableIndices", err)
}

// DescribeTableIndexStats is POST /v1/table/{id}/index/{index_name}/stats.
func (s *Server) DescribeTableIndexStats(c echo.Context, _ nsapi.Id, _ string, params nsapi.DescribeTableIndexStatsParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.DescribeTableIndexStatsRequest{})
	return unbacked(c, "DescribeTableIndexStats", err)
}

// DropTableIndex is POST /v1/table/{id}/index/{index_name}/drop.
func (s *Server) DropTableIndex(c echo.Context, _ nsapi.Id, _ string, params nsapi.DropTableIndexParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &idOnlyRequest{})
	return unbacked(c, "DropTableIndex", err)
}
