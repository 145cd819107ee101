package handlers

// The schema evolution operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// UpdateTableSchemaMetadata is POST /v1/table/{id}/schema_metadata/update.
func (s *Server) UpdateTableSchemaMetadata(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableSchemaMetadataParams) error {
	// The body is the metadata map itself; a null value deletes a key.
	var req map[string]*string
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "UpdateTableSchemaMetadata")
}

// AlterTableAlterColumns is POST /v1/table/{id}/alter_columns.
func (s *Server) AlterTableAlterColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableAlterColumnsParams) error {
	var req nsapi.AlterTableAlterColumnsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AlterTableAlterColumns")
}

// UpdateFieldMetadata is POST /v1/table/{id}/update_field_metadata.
func (s *Server) UpdateFieldMetadata(c echo.Context, _ nsapi.Id, params nsapi.UpdateFieldMetadataParams) error {
	var req nsapi.UpdateFieldMetadataRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "UpdateFieldMetadata")
}

// AlterTableDropColumns is POST /v1/table/{id}/drop_columns.
func (s *Server) AlterTableDropColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableDropColumnsParams) error {
	var req nsapi.AlterTableDropColumnsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AlterTableDropColumns")
}

// AlterTableAddColumns is POST /v1/table/{id}/add_columns.
func (s *Server) AlterTableAddColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableAddColumnsParams) error {
	var req nsapi.AlterTableAddColumnsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AlterTableAddColumns")
}

// AlterTableBackfillColumns is POST /v1/table/{id}/backfill_column.
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableBackfillColumnsParams) error {
	var req nsapi.AlterTableBackfillColumnsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AlterTableBackfillColumns")
}
