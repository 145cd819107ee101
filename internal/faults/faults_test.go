package faults

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestMain doubles as the child: with LANCECAT_FAULTS_CHILD set it reaches point "p" three times,
// printing after each, so the parent sees where the kill landed.
func TestMain(m *testing.M) {
	if os.Getenv("LANCECAT_FAULTS_CHILD") != "" {
		for i := 1; i <= 3; i++ {
			Point("other")
			Point("p")
			fmt.Println("passed", i)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPoint: unarmed, nothing happens; "p:2" kills (SIGKILL, not an exit) at the second time p
// is reached, after the first pass printed; other points never fire.
func TestPoint(t *testing.T) {
	self, err := os.Executable()
	assert.NilError(t, err)
	for _, tc := range []struct {
		env    string
		passed int
		killed bool
	}{{"", 3, false}, {"p", 0, true}, {"p:2", 1, true}, {"p:9", 3, false}, {"q", 3, false}} {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), "LANCECAT_FAULTS_CHILD=1", EnvKill+"="+tc.env)
		out, err := cmd.Output()
		var exit *exec.ExitError
		if tc.killed {
			assert.Assert(t, errors.As(err, &exit) && !exit.Exited(), "%q: %v", tc.env, err)
		} else {
			assert.NilError(t, err, tc.env)
		}
		assert.Equal(t, strings.Count(string(out), "passed"), tc.passed, tc.env)
	}
}
