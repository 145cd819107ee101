package handlers

// The schema evolution operations.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/mview"
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
	md, err := t.UpdateSchemaMetadata(c.Request().Context(), strOf(params.Branch), lance.MetadataUpdate(req))
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
	alts := make([]dml.Alteration, len(req.Alterations))
	for i, a := range req.Alterations {
		if a.VirtualColumn != nil {
			return nserr.Unsupportedf("alterations[%d]: virtual columns are not supported by this server; rename, nullable and data_type are", i)
		}
		if a.Rename == nil && a.Nullable == nil && a.DataType == nil {
			return nserr.InvalidInputf("alterations[%d] changes nothing: give rename, nullable or data_type", i)
		}
		path, err := fieldPath(a.Path)
		if err != nil {
			return err
		}
		alts[i] = dml.Alteration{Path: path, Rename: a.Rename, Nullable: a.Nullable}
		if a.DataType != nil {
			if alts[i].DataType, err = arrowType(*a.DataType); err != nil {
				return nserr.InvalidInputf("alterations[%d].data_type: %v", i, err)
			}
		}
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
	updates := make([]catalog.FieldMetadataUpdate, len(req.Updates))
	for i, u := range req.Updates {
		path, err := fieldPath(u.Path)
		if err != nil {
			return err
		}
		updates[i] = catalog.FieldMetadataUpdate{Path: path, Metadata: lance.MetadataUpdate(u.Metadata), Replace: u.Replace != nil && *u.Replace}
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
	paths := make([]string, len(req.Columns))
	for i, col := range req.Columns {
		if paths[i], err = fieldPath(col); err != nil {
			return err
		}
	}
	v, err := t.DropColumns(c.Request().Context(), strOf(req.Branch), paths)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTableDropColumnsResponse{Version: int64(v)})
}

// arrowType reads a data type in the JSON form of the spec's schemas ({"type": "float"},
// {"type": "fixed_size_list", "fields": […], "length": 16}, …). A field the spec's
// JsonArrowDataType or JsonArrowField does not have is refused, at any depth, like any spec
// body's ({"lenght": 4} was dropped and the cast failed for want of a length, or a misspelled
// nullable was silently ignored).
func arrowType(jt map[string]any) (arrow.DataType, error) {
	b, err := json.Marshal(jt)
	if err != nil {
		return nil, err
	}
	var t lance.JSONDataType
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%s (a data type has type, fields and length; a field name, type, nullable and metadata)", strings.TrimPrefix(err.Error(), "json: "))
	}
	schema, err := lance.FromJSONSchema(lance.JSONSchema{Fields: []lance.JSONField{{Name: "c", Type: t, Nullable: true}}})
	if err != nil {
		return nil, err
	}
	return schema.Field(0).Type, nil
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
	if computed, err := computedColumns(req.NewColumns); err != nil || computed != nil {
		if err != nil {
			return err
		}
		// Computed columns (package mview): declared all-null, filled by backfill_column.
		if b := strOf(req.Branch); b != "" && b != "main" {
			return nserr.Unsupportedf("computed columns are declared on the main branch only")
		}
		v, err := mview.DeclareComputed(c.Request().Context(), t, computed)
		if err != nil {
			return err
		}
		return writeJSON(c, nsapi.AlterTableAddColumnsResponse{Version: int64(v.Number())})
	}
	cols := make([]dml.NewColumn, len(req.NewColumns))
	for i, nc := range req.NewColumns {
		expr := strOf(nc.Expression)
		if nc.Name == "" || expr == "" {
			return nserr.InvalidInputf("new_columns[%d] needs a name and an expression", i)
		}
		cols[i] = dml.NewColumn{Name: nc.Name, Expr: expr}
	}
	v, err := t.AddColumns(c.Request().Context(), strOf(req.Branch), cols)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTableAddColumnsResponse{Version: int64(v)})
}

// computedColumns reads the computed entries of an add_columns request: nil when there are
// none; an error when virtual (UDF) columns are asked for (406: no user-code runtime) or
// computed ones are mixed with others.
func computedColumns(ncs []nsapi.AddColumnsEntry) ([]mview.ComputedColumn, error) {
	var out []mview.ComputedColumn
	for i, nc := range ncs {
		if nc.VirtualColumn != nil {
			return nil, nserr.Unsupportedf("new_columns[%d]: virtual columns run a user-defined function (a pickled Python UDF in a worker runtime); this server has no user-code runtime: declare a computed column with a SQL expression instead", i)
		}
		if nc.Computed != nil {
			if nc.Expression != nil {
				return nil, nserr.InvalidInputf("new_columns[%d]: give expression or computed, not both", i)
			}
			out = append(out, mview.ComputedColumn{Name: nc.Name, Expr: *nc.Computed})
		}
	}
	if out != nil && len(out) != len(ncs) {
		return nil, nserr.InvalidInputf("new_columns: declare computed columns in a request of their own")
	}
	return out, nil
}

// AlterTableBackfillColumns is POST /v1/table/{id}/backfill_column: 202 with the backfill job's
// id (GET /v1/table/{id}/tasks follows it). The job's checkpoints are per batch of fragments
// (checkpoint_size, default mview.DefaultBackfillBatch).
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableBackfillColumnsParams) error {
	var req nsapi.AlterTableBackfillColumnsRequest
	t, err := s.tableRequest(c, "AlterTableBackfillColumns", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if b := strOf(req.Branch); b != "" && b != "main" {
		return nserr.Unsupportedf("backfill runs on the main branch only")
	}
	if req.ReadVersion != nil {
		return nserr.InvalidInputf("read_version: a backfill fills the latest version")
	}
	path, err := fieldPath(req.Column)
	if err != nil {
		return err
	}
	br := mview.BackfillRequest{Table: t.Meta().ID, Column: path, Where: strOf(req.Where)}
	if req.CheckpointSize != nil {
		if *req.CheckpointSize <= 0 {
			return nserr.InvalidInputf("checkpoint_size must be positive")
		}
		br.Batch = *req.CheckpointSize
	}
	job, err := s.views.Backfill(c.Request().Context(), t, br)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, nsapi.AlterTableBackfillColumnsResponse{JobId: job})
}

// fieldPath turns a spec field path (dot-separated segments; a segment in backticks may hold
// dots, "“" is a literal backtick) into the table layer's dot path. Names that themselves
// hold a dot cannot be addressed by the table layer and are refused.
func fieldPath(p string) (string, error) {
	if p == "" {
		return "", nserr.InvalidInputf("a column path is empty")
	}
	if !strings.Contains(p, "`") {
		return p, nil
	}
	var segs []string
	for i := 0; i < len(p); {
		var seg strings.Builder
		if p[i] == '`' {
			i++
			closed := false
			for i < len(p) {
				if p[i] == '`' {
					if i+1 < len(p) && p[i+1] == '`' {
						seg.WriteByte('`')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				seg.WriteByte(p[i])
				i++
			}
			if !closed || (i < len(p) && p[i] != '.') {
				return "", nserr.InvalidInputf("column path %q: unbalanced backticks", p)
			}
		} else {
			for i < len(p) && p[i] != '.' {
				if p[i] == '`' {
					return "", nserr.InvalidInputf("column path %q: a backtick inside an unquoted segment", p)
				}
				seg.WriteByte(p[i])
				i++
			}
		}
		if seg.Len() == 0 || strings.Contains(seg.String(), ".") {
			return "", nserr.InvalidInputf("column path %q: segment %q is empty or holds a dot, which this server cannot address", p, seg.String())
		}
		segs = append(segs, seg.String())
		if i < len(p) { // at a '.'
			i++
			if i == len(p) {
				return "", nserr.InvalidInputf("column path %q ends with a dot", p)
			}
		}
	}
	return strings.Join(segs, "."), nil
}
