package maintenance

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
)

// TestRunGates: what stops each step — the policy skips, protection refuses cleanup only,
// read-only mode and a shallow clone's base refuse everything — and that a refused or skipped
// pass changes nothing.
func TestRunGates(t *testing.T) {
	off := false
	hour := time.Duration(0)
	tests := []struct {
		name string
		opts RunOptions
		want map[string]string
	}{
		{"all on", RunOptions{OlderThan: &hour},
			map[string]string{StepCompact: StatusDone, StepOptimizeIndices: StatusNothingToDo, StepCleanup: StatusDone}},
		{"policy off", RunOptions{Policy: registry.PolicySettings{CompactEnabled: &off, CleanupEnabled: &off, OptimizeIndicesEnabled: &off}, OlderThan: &hour},
			map[string]string{StepCompact: StatusSkipped, StepOptimizeIndices: StatusSkipped, StepCleanup: StatusSkipped}},
		{"protected", RunOptions{Protected: true, OlderThan: &hour},
			map[string]string{StepCompact: StatusDone, StepOptimizeIndices: StatusNothingToDo, StepCleanup: StatusRefused}},
		{"read-only", RunOptions{ReadOnly: true, OlderThan: &hour},
			map[string]string{StepCompact: StatusRefused, StepOptimizeIndices: StatusRefused, StepCleanup: StatusRefused}},
		{"base of a clone", RunOptions{BaseOf: "ns.clone", OlderThan: &hour},
			map[string]string{StepCompact: StatusRefused, StepOptimizeIndices: StatusRefused, StepCleanup: StatusRefused}},
		{"dry run", RunOptions{DryRun: true, OlderThan: &hour},
			map[string]string{StepCompact: StatusWouldDo, StepOptimizeIndices: StatusNothingToDo, StepCleanup: StatusWouldDo}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ds := compactTable(t, "2.1", false, 10, 10, 10)
			before := head(t, ds).Number()
			rep, err := Run(ctx, ds, tt.opts)
			assert.NilError(t, err)
			got := map[string]string{}
			for _, s := range rep.Steps {
				got[s.Step] = s.Status
				if s.Status == StatusRefused || s.Status == StatusSkipped {
					assert.Check(t, s.Reason != "", "a %s step says why", s.Status)
				}
			}
			assert.DeepEqual(t, got, tt.want)
			if tt.want[StepCompact] != StatusDone {
				assert.Equal(t, head(t, ds).Number(), before, "nothing committed")
			}
		})
	}
}

func TestRunUnknownStep(t *testing.T) {
	ds := compactTable(t, "2.1", false, 10)
	_, err := Run(context.Background(), ds, RunOptions{Steps: []string{"vacuum"}})
	assert.ErrorIs(t, err, ErrUnknownStep)
}

// TestRunRefusesNegativeOlderThan: a negative older_than would put cleanup's cutoff in the
// future (every version but the latest removed); it is refused with a 400 naming it, by Run and
// before anything runs, and 0 (everything older than now) is a valid pass.
func TestRunRefusesNegativeOlderThan(t *testing.T) {
	ds := compactTable(t, "2.1", false, 10)
	for _, tc := range []struct {
		d   time.Duration
		bad bool
	}{{-time.Second, true}, {math.MinInt64, true}, {-1, true}, {0, false}, {math.MaxInt64, false}} {
		_, err := Run(context.Background(), ds, RunOptions{Steps: []string{StepCleanup}, DryRun: true, OlderThan: &tc.d})
		if !tc.bad {
			assert.NilError(t, err, "%v", tc.d)
			continue
		}
		var ne *nserr.Error
		assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.InvalidInput, "%v: %v", tc.d, err)
		assert.ErrorContains(t, err, "older_than_seconds must not be negative")
	}
}
