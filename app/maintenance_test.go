package app

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/maintenance"
)

// TestMaintenanceRunDoor: POST /v1/table/{id}/maintenance/run as Run wires it — a dry run
// reports and changes nothing, a run compacts and (with older_than_seconds 0) cleans, reporting
// per step; optimize_indices says honestly that it is not implemented; a bad step is 400 and a
// missing table 404.
func TestMaintenanceRunDoor(t *testing.T) {
	ctx := context.Background()
	e := newGovernedEnv(t, withMaintenance())
	cat, gov, c := e.catalog, e.gov, e.anyone

	// Table a$t: five appends of 10 rows (six small fragments).
	_, err := cat.CreateNamespace(ctx, ident.ID{"a"}, nil, "")
	assert.NilError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	batch := func(from int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		defer b.Release()
		for i := from; i < from+10; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		return b.NewRecordBatch()
	}
	_, _, err = cat.CreateTable(ctx, ident.ID{"a", "t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, batch(0))})
	assert.NilError(t, err)
	tbl, err := cat.LoadTable(ctx, ident.ID{"a", "t"})
	assert.NilError(t, err)
	ds := mustDataset(t, tbl)
	for i := int64(1); i <= 5; i++ {
		rr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch(i * 10)})
		_, err := ds.Append(ctx, rr, lance.WriteOptions{})
		assert.NilError(t, err)
	}

	steps := func(s ...controlclient.MaintenanceRunRequestSteps) *[]controlclient.MaintenanceRunRequestSteps {
		return &s
	}
	dry, err := c.RunTableMaintenanceWithResponse(ctx, "a$t", nil, controlclient.MaintenanceRunRequest{DryRun: ptr(true)})
	assert.NilError(t, err)
	assert.Equal(t, dry.StatusCode(), http.StatusOK, string(dry.Body))
	assert.Equal(t, len(dry.JSON200.Steps), 3)
	assert.Equal(t, string(dry.JSON200.Steps[0].Status), maintenance.StatusWouldDo)
	assert.Equal(t, *dry.JSON200.Steps[0].FragmentsBefore, 6)
	assert.Equal(t, string(dry.JSON200.Steps[1].Status), maintenance.StatusNothingToDo, "optimize_indices on a table without indices")
	assert.Equal(t, dry.JSON200.Version, int64(6), "a dry run commits nothing")

	// older_than_seconds past what a Duration holds (math.MaxInt64/1e9 seconds, about 292
	// years) is refused: 18446744074 s times 1e9 wraps to 0.29 s, and the cleanup would remove
	// every version but the latest. The largest that fits would remove nothing.
	huge := int64(18446744074)
	over, err := c.RunTableMaintenanceWithResponse(ctx, "a$t", nil, controlclient.MaintenanceRunRequest{
		Steps: steps("cleanup"), OlderThanSeconds: &huge})
	assert.NilError(t, err)
	assert.Equal(t, over.StatusCode(), http.StatusBadRequest, string(over.Body))
	assert.Assert(t, strings.Contains(string(over.Body), "older_than_seconds"), string(over.Body))
	most := int64(math.MaxInt64 / int64(time.Second))
	keep, err := c.RunTableMaintenanceWithResponse(ctx, "a$t", nil, controlclient.MaintenanceRunRequest{
		Steps: steps("cleanup"), OlderThanSeconds: &most, DryRun: ptr(true)})
	assert.NilError(t, err)
	assert.Equal(t, keep.StatusCode(), http.StatusOK, string(keep.Body))
	assert.Equal(t, string(keep.JSON200.Steps[0].Status), maintenance.StatusNothingToDo, string(keep.Body))

	zero := int64(0)
	run, err := c.RunTableMaintenanceWithResponse(ctx, "a$t", nil, controlclient.MaintenanceRunRequest{
		Steps: steps("cleanup", "compact"), OlderThanSeconds: &zero})
	assert.NilError(t, err)
	assert.Equal(t, run.StatusCode(), http.StatusOK, string(run.Body))
	rep := run.JSON200
	assert.Equal(t, len(rep.Steps), 2, "steps run in the fixed order, only those asked for")
	assert.Equal(t, string(rep.Steps[0].Step), maintenance.StepCompact)
	assert.Equal(t, string(rep.Steps[0].Status), maintenance.StatusDone)
	assert.Equal(t, *rep.Steps[0].FragmentsAfter, 1)
	assert.Equal(t, *rep.Steps[0].RowsRewritten, int64(60))
	assert.Equal(t, string(rep.Steps[1].Status), maintenance.StatusDone)
	assert.Equal(t, *rep.Steps[1].VersionsRemoved, 6, "every version but the latest")
	n, _, err := tbl.Count(ctx, catalog.ReadAt{}, "")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(60))
	evs, _, _, err := gov.Events().Since("", 100)
	assert.NilError(t, err)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	assert.DeepEqual(t, types, []string{maintenance.EventTableCompacted, maintenance.EventTableCleaned})

	bad, err := c.RunTableMaintenanceWithResponse(ctx, "a$t", nil, controlclient.MaintenanceRunRequest{Steps: steps("vacuum")})
	assert.NilError(t, err)
	assert.Equal(t, bad.StatusCode(), http.StatusBadRequest, string(bad.Body))
	missing, err := c.RunTableMaintenanceWithResponse(ctx, "a$nope", nil, controlclient.MaintenanceRunRequest{})
	assert.NilError(t, err)
	assert.Equal(t, missing.StatusCode(), http.StatusNotFound, string(missing.Body))

	// The run is in the table's tasks (newest first, with its report), and in its namespace's;
	// the dry run recorded nothing.
	tasks, err := c.ListTableTasksWithResponse(ctx, "a$t", nil)
	assert.NilError(t, err)
	assert.Equal(t, tasks.StatusCode(), http.StatusOK, string(tasks.Body))
	assert.Equal(t, len(tasks.JSON200.Tasks), 1, string(tasks.Body))
	task := tasks.JSON200.Tasks[0]
	assert.Equal(t, task.Kind, maintenance.TaskKind)
	assert.Equal(t, string(*task.State), "succeeded")
	assert.Equal(t, *task.Origin, maintenance.OriginDoor)
	assert.DeepEqual(t, task.Id, []string{"a", "t"})
	assert.Equal(t, (*task.Result)["version"], float64(rep.Version))
	assert.Assert(t, task.Progress != nil)
	nsTasks, err := c.ListNamespaceTasksWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	assert.Equal(t, nsTasks.StatusCode(), http.StatusOK, string(nsTasks.Body))
	assert.Equal(t, len(nsTasks.JSON200.Tasks), 1, string(nsTasks.Body))
	assert.Equal(t, *nsTasks.JSON200.Tasks[0].TaskId, *task.TaskId)
	other, err := c.ListNamespaceTasksWithResponse(ctx, "b", nil)
	assert.NilError(t, err)
	assert.Equal(t, other.StatusCode(), http.StatusOK, string(other.Body))
	assert.Equal(t, len(other.JSON200.Tasks), 0)
}
