package maintenance

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
)

// TestPassesRecordTasks: a pass on request and a sweep pass are each recorded in the table's
// task history with their origin, progress (every step) and final report, and the namespace
// listing finds them; a dry run records nothing and an idle sweep adds nothing.
func TestPassesRecordTasks(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 2, 3)
	s := &Service{Catalog: ns, Holder: "r1"}
	id := ident.ID{"t0000"}

	_, err := s.RunTable(ctx, id, RunOptions{DryRun: true})
	assert.NilError(t, err)
	recs, err := s.TableTasks(ctx, id)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 0, "a dry run writes nothing, not even its record")

	rep, err := s.RunTable(ctx, id, RunOptions{Steps: []string{StepCompact}})
	assert.NilError(t, err)
	recs, err = s.TableTasks(ctx, id)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	r := recs[0]
	assert.Equal(t, r.Kind, TaskKind)
	assert.Equal(t, r.Origin, OriginDoor)
	assert.Equal(t, r.Holder, "r1")
	assert.Equal(t, r.State, tasks.StateSucceeded)
	assert.DeepEqual(t, r.Table, []string(id))
	var got RunReport
	assert.NilError(t, json.Unmarshal(r.Result, &got))
	assert.Equal(t, got.Version, rep.Version)
	assert.Equal(t, got.Step(StepCompact).Status, StatusDone)
	var prog taskProgress
	assert.NilError(t, json.Unmarshal(r.Progress, &prog))
	assert.Equal(t, len(prog.Steps), 1)

	_, err = s.Sweep(ctx)
	assert.NilError(t, err)
	_, err = s.Sweep(ctx) // idle: records nothing
	assert.NilError(t, err)
	all, err := s.NamespaceTasks(ctx, nil)
	assert.NilError(t, err)
	origins := map[string]int{}
	for _, r := range all {
		origins[r.Origin]++
		assert.Equal(t, r.State, tasks.StateSucceeded)
	}
	// t0000 was stamped by the door pass, so only t0001 is worked by the sweep.
	assert.DeepEqual(t, origins, map[string]int{OriginDoor: 1, OriginSweep: 1})
	for i := 1; i < len(all); i++ {
		assert.Assert(t, all[i-1].ID >= all[i].ID, "newest first")
	}
	gone, err := s.TableTasks(ctx, ident.ID{"nope"})
	assert.NilError(t, err)
	assert.Equal(t, len(gone), 0)
}

// TestDryRunTakesNoLease: while another replica holds the table's lease a real pass is refused
// (409) but a dry run answers: it changes nothing, so it neither waits for nor blocks a pass.
func TestDryRunTakesNoLease(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 1, 2)
	s := &Service{Catalog: ns, Holder: "r1"}
	id := ident.ID{"t0000"}
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, _ := tbl.Dataset()
	_, err = acquireLease(ctx, ds.Store(), "other", time.Hour, time.Now)
	assert.NilError(t, err)
	_, err = s.RunTable(ctx, id, RunOptions{})
	assert.ErrorContains(t, err, "another replica")
	rep, err := s.RunTable(ctx, id, RunOptions{DryRun: true})
	assert.NilError(t, err)
	assert.Equal(t, rep.Step(StepCompact).Status, StatusWouldDo)
}
