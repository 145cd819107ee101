package handlers

// The schema evolution operations.

import (
	"strings"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
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
	alts := make([]lance.ColumnAlteration, len(req.Alterations))
	for i, a := range req.Alterations {
		if a.DataType != nil || a.VirtualColumn != nil {
			return nserr.Unsupportedf("alterations[%d]: changing a column's data type or making it virtual rewrites data, which this server does not do; rename and nullable are supported", i)
		}
		if a.Rename == nil && a.Nullable == nil {
			return nserr.InvalidInputf("alterations[%d] changes nothing: give rename or nullable", i)
		}
		path, err := fieldPath(a.Path)
		if err != nil {
			return err
		}
		alts[i] = lance.ColumnAlteration{Path: path, Rename: a.Rename, Nullable: a.Nullable}
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
	updates := make([]namespace.FieldMetadataUpdate, len(req.Updates))
	for i, u := range req.Updates {
		path, err := fieldPath(u.Path)
		if err != nil {
			return err
		}
		updates[i] = namespace.FieldMetadataUpdate{Path: path, Metadata: lance.MetadataUpdate(u.Metadata), Replace: u.Replace != nil && *u.Replace}
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

// AlterTableAddColumns is POST /v1/table/{id}/add_columns.
func (s *Server) AlterTableAddColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableAddColumnsParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.AlterTableAddColumnsRequest{})
	return unbacked(c, "AlterTableAddColumns", err)
}

// AlterTableBackfillColumns is POST /v1/table/{id}/backfill_column.
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ nsapi.Id, params nsapi.AlterTableBackfillColumnsParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.AlterTableBackfillColumnsRequest{})
	return unbacked(c, "AlterTableBackfillColumns", err)
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
