package governed

// The answers of operations that committed but whose follow-up work failed: the commit stands
// (undoing it would break what the caller was told, or the batch's all-or-none), so the answer
// is nserr.Committed, which says what stands, what is missing and what to do, in the catalog's
// words. The follow-up's own error (an OpenFGA or control-root failure, which may name internal
// addresses) is kept as the cause, for the server log only.

import (
	stderrors "errors"
	"slices"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
)

// followUp is one piece of work after a commit that failed.
type followUp struct {
	missing string // what did not happen, e.g. "the owner of table ns$t could not be recorded"
	remedy  string // what to do about it
	cause   error
}

// Remedies, one per kind of follow-up.
const (
	// An object whose owner (and the edge to its parent) was not recorded grants nothing to
	// anyone but an estate admin: the id is taken by an object its creator cannot reach.
	remedyOwnerless = "the object has no owner, so only an estate admin can act on it: ask one to drop it and then create it again, or to grant you ownership"
	// Tuples left on an object that is gone grant on nothing, and every create or rename revokes
	// whatever an id still holds before seeding it.
	remedyTuples = "the grants left on the old object name nothing that exists and are revoked before anything is created at its id; nothing to redo"
	// A protection or policy record left at an id would apply to the next object created there.
	remedyRecords = "records left at the old id would apply to the next object created there: disarm its protection with POST …/protection {\"protected\": false} and clear its policy"
	// A renamed table whose records did not move is unprotected at its new id.
	remedyMoved = "set the table's protection and policy again at its new id"
)

// committed is the answer of an operation (done: what stands) that committed, in transaction txn
// when it has one, whose follow-ups fs failed; nil when none did.
func committed(done, txn string, fs []followUp) error {
	if len(fs) == 0 {
		return nil
	}
	c := &nserr.Committed{Done: done, Transaction: txn}
	var remedies []string
	var causes []error
	for _, f := range fs {
		c.Missing = append(c.Missing, f.missing)
		if !slices.Contains(remedies, f.remedy) {
			remedies = append(remedies, f.remedy)
		}
		causes = append(causes, f.cause)
	}
	c.Remedy = strings.Join(remedies, "; ")
	c.Cause = stderrors.Join(causes...)
	return c
}
