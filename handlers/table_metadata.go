package handlers

// The table metadata operations: listing, registration, description, lifecycle.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// ListTables is GET /v1/namespace/{id}/table/list.
func (s *Server) ListTables(c echo.Context, _ nsapi.Id, params nsapi.ListTablesParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "ListTables")
}

// ListAllTables is GET /v1/table.
func (s *Server) ListAllTables(c echo.Context, params nsapi.ListAllTablesParams) error {
	if err := s.checkDelimiter(params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "ListAllTables")
}

// RegisterTable is POST /v1/table/{id}/register.
func (s *Server) RegisterTable(c echo.Context, _ nsapi.Id, params nsapi.RegisterTableParams) error {
	var req nsapi.RegisterTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	if err := canonicalEnum("mode", req.Mode, "Create", "Overwrite"); err != nil {
		return err
	}
	return notBacked(c, "RegisterTable")
}

// DescribeTable is POST /v1/table/{id}/describe.
func (s *Server) DescribeTable(c echo.Context, _ nsapi.Id, params nsapi.DescribeTableParams) error {
	var req nsapi.DescribeTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DescribeTable")
}

// TableExists is POST /v1/table/{id}/exists.
func (s *Server) TableExists(c echo.Context, _ nsapi.Id, params nsapi.TableExistsParams) error {
	var req nsapi.TableExistsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "TableExists")
}

// DropTable is POST /v1/table/{id}/drop.
func (s *Server) DropTable(c echo.Context, _ nsapi.Id, params nsapi.DropTableParams) error {
	// The spec sends no body here, but clients do ({"id":[…]} or null): it is read and checked.
	var req struct {
		Id *[]string `json:"id"`
	}
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DropTable")
}

// DeregisterTable is POST /v1/table/{id}/deregister.
func (s *Server) DeregisterTable(c echo.Context, _ nsapi.Id, params nsapi.DeregisterTableParams) error {
	var req nsapi.DeregisterTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeregisterTable")
}

// RestoreTable is POST /v1/table/{id}/restore.
func (s *Server) RestoreTable(c echo.Context, _ nsapi.Id, params nsapi.RestoreTableParams) error {
	var req nsapi.RestoreTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "RestoreTable")
}

// RenameTable is POST /v1/table/{id}/rename.
func (s *Server) RenameTable(c echo.Context, _ nsapi.Id, params nsapi.RenameTableParams) error {
	var req nsapi.RenameTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "RenameTable")
}

// GetTableStats is POST /v1/table/{id}/stats.
func (s *Server) GetTableStats(c echo.Context, _ nsapi.Id, params nsapi.GetTableStatsParams) error {
	var req nsapi.GetTableStatsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "GetTableStats")
}

// DeclareTable is POST /v1/table/{id}/declare.
func (s *Server) DeclareTable(c echo.Context, _ nsapi.Id, params nsapi.DeclareTableParams) error {
	var req nsapi.DeclareTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeclareTable")
}
