package guards

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
)

// TestDataDoors: every data-plane operation is a door on its table with the relation of what it
// does: the reads that disclose rows (query, count, and the plans, whose analysis counts the rows
// a predicate matches) need can_read_data, every write can_write_data. The reads pass read-only
// mode and are not shed; every write is refused in read-only mode and shed under load.
func TestDataDoors(t *testing.T) {
	for _, tc := range []struct {
		op, route string
		relation  string
		read      bool
	}{
		{"QueryTable", "/v1/table/:id/query", "can_read_data", true},
		{"CountTableRows", "/v1/table/:id/count_rows", "can_read_data", true},
		{"ExplainTableQueryPlan", "/v1/table/:id/explain_plan", "can_read_data", true},
		{"AnalyzeTableQueryPlan", "/v1/table/:id/analyze_plan", "can_read_data", true},
		{"InsertIntoTable", "/v1/table/:id/insert", "can_write_data", false},
		{"MergeInsertIntoTable", "/v1/table/:id/merge_insert", "can_write_data", false},
		{"UpdateTable", "/v1/table/:id/update", "can_write_data", false},
		{"DeleteFromTable", "/v1/table/:id/delete", "can_write_data", false},
		{"AlterTableAddColumns", "/v1/table/:id/add_columns", "can_write_data", false},
		{"AlterTableAlterColumns", "/v1/table/:id/alter_columns", "can_write_data", false},
		{"AlterTableDropColumns", "/v1/table/:id/drop_columns", "can_write_data", false},
	} {
		door, ok := SpecDoors[tc.op]
		assert.Assert(t, ok, "%s has no door", tc.op)
		assert.Equal(t, door.Kind, KindTable, tc.op)
		rel, onParent, err := authz.RelationFor(door.Action)
		assert.NilError(t, err, tc.op)
		assert.Equal(t, rel, tc.relation, tc.op)
		assert.Assert(t, !onParent, tc.op)
		assert.Equal(t, IsReadRequest("POST", tc.route), tc.read, tc.op)
	}
}
