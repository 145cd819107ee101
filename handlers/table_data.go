package handlers

// The table data operations (Arrow IPC bodies and non-JSON answers).

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/internal/arrowipc"
	"github.com/lancecat/lancecat/namespace"
)

// InsertIntoTable is POST /v1/table/{id}/insert.
func (s *Server) InsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.InsertIntoTableParams) error {
	_, err := s.pathID(c, params.Delimiter)
	if err == nil {
		err = guards.CanonicalEnum("mode", params.Mode, "Append", "Overwrite")
	}
	return unbacked(c, "InsertIntoTable", err)
}

// MergeInsertIntoTable is POST /v1/table/{id}/merge_insert (`on`: one or more match fields).
func (s *Server) MergeInsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.MergeInsertIntoTableParams) error {
	_, _, err := s.mergeInsertRequest(c, params)
	return unbacked(c, "MergeInsertIntoTable", err)
}

// UpdateTable is POST /v1/table/{id}/update.
func (s *Server) UpdateTable(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.UpdateTableRequest{})
	return unbacked(c, "UpdateTable", err)
}

// DeleteFromTable is POST /v1/table/{id}/delete.
func (s *Server) DeleteFromTable(c echo.Context, _ nsapi.Id, params nsapi.DeleteFromTableParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.DeleteFromTableRequest{})
	return unbacked(c, "DeleteFromTable", err)
}

// QueryTable is POST /v1/table/{id}/query.
func (s *Server) QueryTable(c echo.Context, _ nsapi.Id, params nsapi.QueryTableParams) error {
	_, _, err := s.decodeQueryRequest(c, params.Delimiter, &nsapi.QueryTableRequest{}, "order_by")
	return unbacked(c, "QueryTable", err)
}

// CountTableRows is POST /v1/table/{id}/count_rows.
func (s *Server) CountTableRows(c echo.Context, _ nsapi.Id, params nsapi.CountTableRowsParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.CountTableRowsRequest{})
	return unbacked(c, "CountTableRows", err)
}

// CreateTable is POST /v1/table/{id}/create: the body is an Arrow IPC stream (an empty body or
// a stream with a schema and no batches makes an empty table).
func (s *Server) CreateTable(c echo.Context, _ nsapi.Id, params nsapi.CreateTableParams) error {
	id, req, err := s.createTableRequest(c, &params)
	if err = s.backed(c, "CreateTable", err); err != nil {
		return err
	}
	nt := namespace.NewTable{Mode: strOf(req.Mode), Location: c.Request().Header.Get("x-lance-table-location")}
	propsJSON := strOf(req.Properties)
	if propsJSON == "" {
		propsJSON = c.Request().Header.Get("x-lance-table-properties")
	}
	if propsJSON != "" {
		if err := json.Unmarshal([]byte(propsJSON), &nt.Properties); err != nil {
			return nserr.InvalidInputf("properties must be a JSON object of strings: %v", err)
		}
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	schema, recs, err := readArrowStream(body)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if schema == nil {
		return nserr.InvalidInputf("the body is empty: an Arrow IPC stream with at least the table's schema is required")
	}
	nt.Schema, nt.Records = schema, recs
	ctx, err := overwriteContext(c, nt.Mode)
	if err != nil {
		return err
	}
	t, version, err := s.catalog.CreateTable(ctx, id, nt)
	if err != nil {
		return err
	}
	resp := nsapi.CreateTableResponse{Location: &t.URI, Properties: &t.Properties}
	if version > 0 {
		resp.Version = ptr(int64(version))
	}
	if len(t.StorageOptions) > 0 {
		resp.StorageOptions = &t.StorageOptions
	}
	return writeJSON(c, resp)
}

// ExplainTableQueryPlan is POST /v1/table/{id}/explain_plan.
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.ExplainTableQueryPlanParams) error {
	_, _, err := s.decodeQueryRequest(c, params.Delimiter, &nsapi.ExplainTableQueryPlanRequest{}, "query", "order_by")
	return unbacked(c, "ExplainTableQueryPlan", err)
}

// AnalyzeTableQueryPlan is POST /v1/table/{id}/analyze_plan.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.AnalyzeTableQueryPlanParams) error {
	_, _, err := s.decodeQueryRequest(c, params.Delimiter, &nsapi.AnalyzeTableQueryPlanRequest{}, "order_by")
	return unbacked(c, "AnalyzeTableQueryPlan", err)
}

// readArrowStream decodes an Arrow IPC stream body (arrowipc.ReadStream: bounded by its size,
// verified before arrow-go reads it); what cannot be decoded is InvalidInput. An empty body is nil.
func readArrowStream(body []byte) (*arrow.Schema, []arrow.RecordBatch, error) {
	schema, recs, err := arrowipc.ReadStream(body)
	if err != nil {
		return nil, nil, nserr.InvalidInputf("the body is %v", err)
	}
	return schema, recs, nil
}
