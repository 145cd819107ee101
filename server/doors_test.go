package server

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/guards"
)

// TestEveryControlOperationHasADoor: the control door table (guards.ControlDoors) names every
// control operation the server routes and nothing else, so a new control operation cannot reach
// its handler without someone deciding its guards.
func TestEveryControlOperationHasADoor(t *testing.T) {
	ops, err := ControlOperations()
	assert.NilError(t, err)
	seen := map[string]bool{}
	for _, o := range ops {
		seen[o.ID] = true
		_, ok := guards.ControlDoors[o.ID]
		assert.Assert(t, ok, "control operation %s has no door in guards.ControlDoors", o.ID)
	}
	for id := range guards.ControlDoors {
		assert.Assert(t, seen[id], "guards.ControlDoors names %s, which is no control operation", id)
	}
}
