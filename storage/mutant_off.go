//go:build !lancecat_faults_mutant

package storage

// mutantUnconditionalPut is false in every build but the fault campaign's mutant
// (scripts/faults, build tag lancecat_faults_mutant): the constant lets the compiler drop the
// mutant's branch from a production binary.
const mutantUnconditionalPut = false
