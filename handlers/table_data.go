package handlers

// The table data operations (Arrow IPC bodies and non-JSON answers).

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// InsertIntoTable is POST /v1/table/{id}/insert.
func (s *Server) InsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.InsertIntoTableParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	if err := canonicalEnum("mode", params.Mode, "Append", "Overwrite"); err != nil {
		return err
	}
	return notBacked(c, "InsertIntoTable")
}

// MergeInsertIntoTable is POST /v1/table/{id}/merge_insert.
func (s *Server) MergeInsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.MergeInsertIntoTableParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "MergeInsertIntoTable")
}

// UpdateTable is POST /v1/table/{id}/update.
func (s *Server) UpdateTable(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableParams) error {
	var req nsapi.UpdateTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "UpdateTable")
}

// DeleteFromTable is POST /v1/table/{id}/delete.
func (s *Server) DeleteFromTable(c echo.Context, _ nsapi.Id, params nsapi.DeleteFromTableParams) error {
	var req nsapi.DeleteFromTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeleteFromTable")
}

// QueryTable is POST /v1/table/{id}/query.
func (s *Server) QueryTable(c echo.Context, _ nsapi.Id, params nsapi.QueryTableParams) error {
	var req nsapi.QueryTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "QueryTable")
}

// CountTableRows is POST /v1/table/{id}/count_rows.
func (s *Server) CountTableRows(c echo.Context, _ nsapi.Id, params nsapi.CountTableRowsParams) error {
	var req nsapi.CountTableRowsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CountTableRows")
}

// CreateTable is POST /v1/table/{id}/create.
func (s *Server) CreateTable(c echo.Context, _ nsapi.Id, params nsapi.CreateTableParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	if err := canonicalEnum("mode", params.Mode, "Create", "ExistOk", "Overwrite"); err != nil {
		return err
	}
	return notBacked(c, "CreateTable")
}

// ExplainTableQueryPlan is POST /v1/table/{id}/explain_plan.
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.ExplainTableQueryPlanParams) error {
	var req nsapi.ExplainTableQueryPlanRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "ExplainTableQueryPlan")
}

// AnalyzeTableQueryPlan is POST /v1/table/{id}/analyze_plan.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.AnalyzeTableQueryPlanParams) error {
	var req nsapi.AnalyzeTableQueryPlanRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AnalyzeTableQueryPlan")
}
