//go:build lancecat_faults_mutant

package storage

import (
	"fmt"
	"os"
)

// mutantUnconditionalPut breaks S3 PutIfAbsent on purpose: it writes unconditionally, so two
// commits of the same version both "win". Only the fault campaign builds it (-tags
// lancecat_faults_mutant), to prove its checkers see a broken commit path; no release build
// (Makefile, Dockerfile, goreleaser) passes the tag.
const mutantUnconditionalPut = true

func init() {
	fmt.Fprintln(os.Stderr, "lancecat: THIS IS THE FAULT CAMPAIGN'S MUTANT BUILD: PutIfAbsent is unconditional; never deploy it")
}
