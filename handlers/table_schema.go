package handlers

// The schema evolution operations. Their bodies are read by package wire; computed columns and
// their backfill are the views service's (package mview, behind catalog/governed).

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/wire"
)

// UpdateTableSchemaMetadata is POST /v1/table/{id}/schema_metadata/update.
func (s *Server) UpdateTableSchemaMetadata(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableSchemaMetadataParams) error {
	// The body is the metadata map itself: a merge, where a null value deletes a key. The answer
	// is the whole resulting map.
	var req map[string]*string
	t, err := s.tableRequest(c, "UpdateTableSchemaMetadata", params.Delimiter, &req)
	if err != nil {
		return err
	}
	md, err := t.UpdateSchemaMetadata(c.Request().Context(), strOf(params.Branch), req)
	if err != nil {
		return err
	}
	return writeJSON(c, md)
}

// AlterTableAlterColumns is POST /v1/table/{id}/alter_columns.
func (s *Server) AlterTableAlterColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableAlterColumnsParams) error {
	var req nsapi.AlterTableAlterColumnsRequest
	t, err := s.tableRequest(c, "AlterTableAlterColumns", params.Delimiter, &req)
	if err != nil {
		return err
	}
	alts, err := wire.Alterations(req.Alterations)
	if err != nil {
		return err
	}
	v, err := t.AlterColumns(c.Request().Context(), strOf(req.Branch), alts)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTableAlterColumnsResponse{Version: int64(v)})
}

// UpdateFieldMetadata is POST /v1/table/{id}/update_field_metadata.
func (s *Server) UpdateFieldMetadata(c echo.Context, _ nsapi.Id, params nsapi.UpdateFieldMetadataParams) error {
	var req nsapi.UpdateFieldMetadataRequest
	t, err := s.tableRequest(c, "UpdateFieldMetadata", params.Delimiter, &req)
	if err != nil {
		return err
	}
	updates, err := wire.FieldMetadataUpdates(req.Updates)
	if err != nil {
		return err
	}
	v, fields, err := t.UpdateFieldMetadata(c.Request().Context(), strOf(req.Branch), updates)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.UpdateFieldMetadataResponse{Version: int64(v), Fields: &fields})
}

// AlterTableDropColumns is POST /v1/table/{id}/drop_columns.
func (s *Server) AlterTableDropColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableDropColumnsParams) error {
	var req nsapi.AlterTableDropColumnsRequest
	t, err := s.tableRequest(c, "AlterTableDropColumns", params.Delimiter, &req)
	if err != nil {
		return err
	}
	paths, err := wire.FieldPaths(req.Columns)
	if err != nil {
		return err
	}
	v, err := t.DropColumns(c.Request().Context(), strOf(req.Branch), paths)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTableDropColumnsResponse{Version: int64(v)})
}

// AlterTableAddColumns is POST /v1/table/{id}/add_columns: each new column is a SQL expression
// over the row (`expression`), evaluated once; or, in a request of their own, computed columns
// (`computed`: declared all-null with their expression, filled by backfill_column; package
// mview). Virtual (UDF) columns are not supported (406: no user-code runtime).
func (s *Server) AlterTableAddColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableAddColumnsParams) error {
	var req nsapi.AlterTableAddColumnsRequest
	t, err := s.tableRequest(c, "AlterTableAddColumns", params.Delimiter, &req)
	if err != nil {
		return err
	}
	cols, computed, err := wire.NewColumns(req)
	if err != nil {
		return err
	}
	var v uint64
	if computed != nil {
		if s.views == nil {
			return notBacked(c, "AlterTableAddColumns (computed columns)")
		}
		v, err = s.views.DeclareComputed(c.Request().Context(), t, computed)
	} else {
		v, err = t.AddColumns(c.Request().Context(), strOf(req.Branch), cols)
	}
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTableAddColumnsResponse{Version: int64(v)})
}

// AlterTableBackfillColumns is POST /v1/table/{id}/backfill_column: 202 with the backfill job's
// id (GET /v1/table/{id}/tasks follows it). The job's checkpoints are per batch of fragments
// (checkpoint_size, default mview.DefaultBackfillBatch).
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableBackfillColumnsParams) error {
	var req nsapi.AlterTableBackfillColumnsRequest
	t, err := s.tableRequest(c, "AlterTableBackfillColumns", params.Delimiter, &req)
	if err = s.viewsBacked(c, "AlterTableBackfillColumns", err); err != nil {
		return err
	}
	br, err := wire.Backfill(t.Meta().ID, req)
	if err != nil {
		return err
	}
	job, err := s.views.Backfill(c.Request().Context(), t, br)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, nsapi.AlterTableBackfillColumnsResponse{JobId: job})
}
