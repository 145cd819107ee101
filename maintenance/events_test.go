package maintenance

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// TestEventsOnlyForMaterialWork: index_optimized is recorded once per index an optimize_indices
// step changed; an up-to-date or skipped index, a step with nothing to do (an idle sweep) and a
// dry run record nothing.
func TestEventsOnlyForMaterialWork(t *testing.T) {
	optimized := StepReport{Step: StepOptimizeIndices, Status: StatusDone, Version: 7, Indices: []tableindex.IndexOptimizeResult{
		{Name: "id_idx", Type: "BTREE", Status: tableindex.IndexOptimized, UnindexedFragments: 2, UnindexedRows: 20, SegmentsBefore: 1, SegmentsAfter: 1},
		{Name: "vec_idx", Type: "IVF_PQ", Status: tableindex.IndexOptimized, UnindexedFragments: 2, UnindexedRows: 20, SegmentsBefore: 1, SegmentsAfter: 2},
		{Name: "text_idx", Type: "INVERTED", Status: tableindex.IndexSkipped, Reason: "not yet"},
		{Name: "cat_idx", Type: "BITMAP", Status: tableindex.IndexUpToDate},
	}}
	for _, tc := range []struct {
		name string
		rep  RunReport
		want map[string]int
	}{
		{"optimize did work", RunReport{Steps: []StepReport{optimized}}, map[string]int{EventIndexOptimized: 2}},
		{"idle", RunReport{Steps: []StepReport{{Step: StepCompact, Status: StatusNothingToDo}, {Step: StepOptimizeIndices, Status: StatusNothingToDo,
			Indices: []tableindex.IndexOptimizeResult{{Name: "id_idx", Status: tableindex.IndexUpToDate}}}, {Step: StepCleanup, Status: StatusNothingToDo}}}, nil},
		{"dry run", RunReport{DryRun: true, Steps: []StepReport{optimized}}, nil},
		{"compact and cleanup", RunReport{Steps: []StepReport{{Step: StepCompact, Status: StatusDone}, {Step: StepCleanup, Status: StatusDone}}},
			map[string]int{EventTableCompacted: 1, EventTableCleaned: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &countingEvents{}
			s := &Service{Events: ev}
			s.init()
			s.emit(ident.ID{"t"}, tc.rep)
			assert.DeepEqual(t, ev.n, tc.want)
		})
	}
}
