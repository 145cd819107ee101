package wire_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/wire"
)

func schemaPtr[T any](v T) *T { return &v }

// TestDescribeSchemaLanceNames: the describe schema uses Lance's own type names (arrow/json.rs),
// nested types included; a LanceDB client fails the whole schema on a name it does not know
// ("utf8", "float32", "decimal128").
func TestDescribeSchemaLanceNames(t *testing.T) {
	in := lance.JSONSchema{Fields: []lance.JSONField{
		{Name: "s", Type: lance.JSONDataType{Type: "utf8"}},
		{Name: "f", Type: lance.JSONDataType{Type: "float32"}},
		{Name: "d", Type: lance.JSONDataType{Type: "float64"}},
		{Name: "m", Type: lance.JSONDataType{Type: "decimal128", Length: schemaPtr(int64(12003))}},
		{Name: "ts", Type: lance.JSONDataType{Type: "timestamp:us:UTC"}},
		{Name: "v", Type: lance.JSONDataType{Type: "fixed_size_list", Length: schemaPtr(int64(4)),
			Fields: []lance.JSONField{{Name: "item", Type: lance.JSONDataType{Type: "float32"}}}}},
		{Name: "l", Type: lance.JSONDataType{Type: "list", Fields: []lance.JSONField{{Name: "item", Type: lance.JSONDataType{Type: "large_utf8"}}}}},
	}}
	out, err := wire.Schema(in)
	assert.NilError(t, err)
	got := map[string]string{}
	for _, f := range out.Fields {
		got[f.Name] = f.Type.Type
		if f.Type.Fields != nil {
			got[f.Name+".item"] = (*f.Type.Fields)[0].Type.Type
		}
	}
	assert.DeepEqual(t, got, map[string]string{
		"s": "string", "f": "float", "d": "double", "m": "decimal:128:12:3", "ts": "timestamp:us:UTC",
		"v": "fixed_size_list", "v.item": "float", "l": "list", "l.item": "large_string",
	})
	assert.Equal(t, *out.Fields[5].Type.Length, int64(4), "fixed_size_list keeps its length")
	assert.Assert(t, out.Fields[3].Type.Length == nil, "a decimal's length is in its name")
}

// TestFieldPath: a spec column path (backticks quote a segment, a doubled backtick is a literal
// one) becomes the table layer's dot path; what the table layer cannot address is 400.
func TestFieldPath(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "a", want: "a"},
		{in: "a.b", want: "a.b"},
		{in: "`a`.b", want: "a.b"},
		{in: "`a``b`", want: "a`b"},
		{in: "", err: "a column path is empty"},
		{in: "`a.b`", err: "is empty or holds a dot"},
		{in: "`a", err: "unbalanced backticks"},
		{in: "a`b", err: "a backtick inside an unquoted segment"},
		{in: "`a`.", err: "ends with a dot"},
	} {
		got, err := wire.FieldPath(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.in)
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
			continue
		}
		assert.NilError(t, err, "%q", tc.in)
		assert.Equal(t, got, tc.want)
	}
}

// TestNewColumns: an add_columns body is either expression columns or, alone and on main,
// computed ones; virtual columns are 406 naming why, a mix or a half-given column 400.
func TestNewColumns(t *testing.T) {
	expr := func(name, e string) nsapi.AddColumnsEntry { return nsapi.AddColumnsEntry{Name: name, Expression: &e} }
	comp := func(name, e string) nsapi.AddColumnsEntry { return nsapi.AddColumnsEntry{Name: name, Computed: &e} }
	cols, computed, err := wire.NewColumns(nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{expr("d", "id * 2")}})
	assert.NilError(t, err)
	assert.DeepEqual(t, cols, []dml.NewColumn{{Name: "d", Expr: "id * 2"}})
	assert.Assert(t, computed == nil)
	cols, computed, err = wire.NewColumns(nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{comp("t", "id * 3")}, Branch: schemaPtr("main")})
	assert.NilError(t, err)
	assert.Assert(t, cols == nil)
	assert.DeepEqual(t, computed, []catalog.ComputedColumn{{Name: "t", Expr: "id * 3"}})

	both := comp("b", "1")
	both.Expression = schemaPtr("2")
	for _, tc := range []struct {
		req  nsapi.AlterTableAddColumnsRequest
		code nserr.Code
		msg  string
	}{
		{nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{{Name: "v", VirtualColumn: &nsapi.AddVirtualColumnEntry{}}}}, nserr.Unsupported, "no user-code runtime"},
		{nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{both}}, nserr.InvalidInput, "give expression or computed, not both"},
		{nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{comp("t", "1"), expr("d", "2")}}, nserr.InvalidInput, "in a request of their own"},
		{nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{comp("t", "1")}, Branch: schemaPtr("dev")}, nserr.Unsupported, "main branch only"},
		{nsapi.AlterTableAddColumnsRequest{NewColumns: []nsapi.AddColumnsEntry{{Name: "x"}}}, nserr.InvalidInput, "new_columns[0] needs a name and an expression"},
	} {
		_, _, err := wire.NewColumns(tc.req)
		assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
		assert.ErrorContains(t, err, tc.msg)
	}
}

// TestAlterationsAndBackfill: the data type of an alteration is read strictly (a misspelled key
// is named), an alteration that changes nothing is 400; a backfill is of the latest version of
// main, with a positive checkpoint size.
func TestAlterationsAndBackfill(t *testing.T) {
	alts, err := wire.Alterations([]nsapi.AlterColumnsEntry{{Path: "`a`.b", DataType: &map[string]any{"type": "float64"}}})
	assert.NilError(t, err)
	assert.Equal(t, alts[0].Path, "a.b")
	assert.Equal(t, alts[0].DataType.Name(), "float64")
	_, err = wire.Alterations([]nsapi.AlterColumnsEntry{{Path: "a", DataType: &map[string]any{"type": "fixed_size_list", "lenght": 4}}})
	assert.ErrorContains(t, err, `alterations[0].data_type: unknown field "lenght"`)
	_, err = wire.Alterations([]nsapi.AlterColumnsEntry{{Path: "a"}})
	assert.ErrorContains(t, err, "alterations[0] changes nothing")

	br, err := wire.Backfill(ident.ID{"ns", "t"}, nsapi.AlterTableBackfillColumnsRequest{Column: "c", Where: schemaPtr("id > 1"), CheckpointSize: schemaPtr(4)})
	assert.NilError(t, err)
	assert.DeepEqual(t, br, catalog.BackfillRequest{Table: ident.ID{"ns", "t"}, Column: "c", Where: "id > 1", Batch: 4})
	for _, tc := range []struct {
		req nsapi.AlterTableBackfillColumnsRequest
		msg string
	}{
		{nsapi.AlterTableBackfillColumnsRequest{Column: "c", Branch: schemaPtr("dev")}, "main branch only"},
		{nsapi.AlterTableBackfillColumnsRequest{Column: "c", ReadVersion: schemaPtr(1)}, "read_version"},
		{nsapi.AlterTableBackfillColumnsRequest{Column: "c", CheckpointSize: schemaPtr(0)}, "checkpoint_size must be positive"},
		{nsapi.AlterTableBackfillColumnsRequest{}, "a column path is empty"},
	} {
		_, err := wire.Backfill(ident.ID{"t"}, tc.req)
		assert.ErrorContains(t, err, tc.msg)
	}
}
