package wire

// The schema evolution bodies (add_columns, alter_columns, drop_columns, update_field_metadata,
// backfill_column) as the table handle and the views service take them, and the describe
// schema as the spec writes it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// Alterations are the alter_columns entries: each renames a column, changes whether it is
// nullable or casts it to a data type (virtual columns: 406, no user-code runtime).
func Alterations(entries []nsapi.AlterColumnsEntry) ([]dml.Alteration, error) {
	alts := make([]dml.Alteration, len(entries))
	for i, a := range entries {
		if a.VirtualColumn != nil {
			return nil, nserr.Unsupportedf("alterations[%d]: virtual columns are not supported by this server; rename, nullable and data_type are", i)
		}
		if a.Rename == nil && a.Nullable == nil && a.DataType == nil {
			return nil, nserr.InvalidInputf("alterations[%d] changes nothing: give rename, nullable or data_type", i)
		}
		path, err := FieldPath(a.Path)
		if err != nil {
			return nil, err
		}
		alts[i] = dml.Alteration{Path: path, Rename: a.Rename, Nullable: a.Nullable}
		if a.DataType != nil {
			if alts[i].DataType, err = arrowType(*a.DataType); err != nil {
				return nil, nserr.InvalidInputf("alterations[%d].data_type: %v", i, err)
			}
		}
	}
	return alts, nil
}

// FieldMetadataUpdates are the update_field_metadata entries: a merge of each field's metadata
// (a null value deletes a key), or with replace its whole metadata.
func FieldMetadataUpdates(entries []nsapi.UpdateFieldMetadataEntry) ([]catalog.FieldMetadataUpdate, error) {
	updates := make([]catalog.FieldMetadataUpdate, len(entries))
	for i, u := range entries {
		path, err := FieldPath(u.Path)
		if err != nil {
			return nil, err
		}
		updates[i] = catalog.FieldMetadataUpdate{Path: path, Metadata: u.Metadata, Replace: u.Replace != nil && *u.Replace}
	}
	return updates, nil
}

// FieldPaths are the table layer's paths of spec column paths (drop_columns).
func FieldPaths(cols []string) ([]string, error) {
	paths := make([]string, len(cols))
	for i, col := range cols {
		var err error
		if paths[i], err = FieldPath(col); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// NewColumns reads an add_columns request: its new columns, each a SQL expression over the row
// evaluated once (cols); or, in a request of their own and on the main branch, computed columns
// (computed: declared all-null with their expression, filled by backfill_column; package
// mview). Exactly one of the two is set. Virtual (UDF) columns are 406: no user-code runtime.
func NewColumns(req nsapi.AlterTableAddColumnsRequest) (cols []dml.NewColumn, computed []catalog.ComputedColumn, err error) {
	for i, nc := range req.NewColumns {
		if nc.VirtualColumn != nil {
			return nil, nil, nserr.Unsupportedf("new_columns[%d]: virtual columns run a user-defined function (a pickled Python UDF in a worker runtime); this server has no user-code runtime: declare a computed column with a SQL expression instead", i)
		}
		if nc.Computed != nil {
			if nc.Expression != nil {
				return nil, nil, nserr.InvalidInputf("new_columns[%d]: give expression or computed, not both", i)
			}
			computed = append(computed, catalog.ComputedColumn{Name: nc.Name, Expr: *nc.Computed})
		}
	}
	if computed != nil {
		if len(computed) != len(req.NewColumns) {
			return nil, nil, nserr.InvalidInputf("new_columns: declare computed columns in a request of their own")
		}
		if req.Branch != nil && *req.Branch != "" && *req.Branch != "main" {
			return nil, nil, nserr.Unsupportedf("computed columns are declared on the main branch only")
		}
		return nil, computed, nil
	}
	cols = make([]dml.NewColumn, len(req.NewColumns))
	for i, nc := range req.NewColumns {
		if nc.Name == "" || nc.Expression == nil || *nc.Expression == "" {
			return nil, nil, nserr.InvalidInputf("new_columns[%d] needs a name and an expression", i)
		}
		cols[i] = dml.NewColumn{Name: nc.Name, Expr: *nc.Expression}
	}
	return cols, nil, nil
}

// Backfill reads a backfill_column request on table: the main branch's latest version, the
// column's path, an optional filter and the fragments per checkpoint (0: the service's default).
func Backfill(table ident.ID, req nsapi.AlterTableBackfillColumnsRequest) (catalog.BackfillRequest, error) {
	if req.Branch != nil && *req.Branch != "" && *req.Branch != "main" {
		return catalog.BackfillRequest{}, nserr.Unsupportedf("backfill runs on the main branch only")
	}
	if req.ReadVersion != nil {
		return catalog.BackfillRequest{}, nserr.InvalidInputf("read_version: a backfill fills the latest version")
	}
	path, err := FieldPath(req.Column)
	if err != nil {
		return catalog.BackfillRequest{}, err
	}
	br := catalog.BackfillRequest{Table: table, Column: path}
	if req.Where != nil {
		br.Where = *req.Where
	}
	if req.CheckpointSize != nil {
		if *req.CheckpointSize <= 0 {
			return catalog.BackfillRequest{}, nserr.InvalidInputf("checkpoint_size must be positive")
		}
		br.Batch = *req.CheckpointSize
	}
	return br, nil
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

// FieldPath turns a spec field path (dot-separated segments; a segment in backticks may hold
// dots, "“" is a literal backtick) into the table layer's dot path. Names that themselves
// hold a dot cannot be addressed by the table layer and are refused.
func FieldPath(p string) (string, error) {
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

// Schema is the describe answer's schema: the table layer's JSON schema as the generated model
// (same JSON shape), with Lance's names for the types (lanceTypeNames).
func Schema(s lance.JSONSchema) (*nsapi.JsonArrowSchema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var out nsapi.JsonArrowSchema
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	for i := range out.Fields {
		lanceTypeName(&out.Fields[i].Type, 0)
	}
	return &out, nil
}

// lanceTypeNames are the names Lance itself gives the types whose Arrow names differ (Lance's
// arrow/json.rs, LogicalType): a LanceDB client parses the describe schema with them and fails
// the whole call on a name it does not know ("utf8").
var lanceTypeNames = map[string]string{
	"utf8": "string", "large_utf8": "large_string",
	"float16": "halffloat", "float32": "float", "float64": "double",
	"date32": "date32:day", "date64": "date64:ms",
}

func lanceTypeName(t *nsapi.JsonArrowDataType, depth int) {
	if name, ok := lanceTypeNames[t.Type]; ok {
		t.Type = name
	}
	if (t.Type == "decimal128" || t.Type == "decimal256") && t.Length != nil {
		// The table layer packs precision and scale into length (p*1000+s); Lance writes
		// decimal:<bits>:<precision>:<scale>.
		t.Type = fmt.Sprintf("decimal:%s:%d:%d", strings.TrimPrefix(t.Type, "decimal"), *t.Length/1000, *t.Length%1000)
		t.Length = nil
	}
	if t.Fields == nil || depth > 64 {
		return
	}
	for i := range *t.Fields {
		lanceTypeName(&(*t.Fields)[i].Type, depth+1)
	}
}
