//go:build !lancecat_faults_mutant

package storage

import "testing"

// TestNoMutantInThisBuild: the fault campaign's mutant (an unconditional PutIfAbsent) exists only
// under its build tag; every other build has the real conditional put.
func TestNoMutantInThisBuild(t *testing.T) {
	if mutantUnconditionalPut {
		t.Fatal("the fault campaign's mutant is compiled in without its build tag")
	}
}
