package app

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestTrashGraceDaysBound: --trash-grace-days past what a time.Duration holds is refused at
// start. 200000 days times 24h wrapped to a negative grace, and every drop was purgeable at
// once: the recovery the operator asked for, gone.
func TestTrashGraceDaysBound(t *testing.T) {
	for _, tc := range []struct {
		days int
		ok   bool
	}{{0, true}, {7, true}, {maxTrashGraceDays, true}, {maxTrashGraceDays + 1, false}, {200000, false}, {-1, false}} {
		g := defaultGovernanceConfig()
		g.TrashGraceDays = tc.days
		err := g.validate()
		if tc.ok {
			assert.NilError(t, err, "%d", tc.days)
			continue
		}
		assert.ErrorContains(t, err, "--trash-grace-days", "%d", tc.days)
	}
}
