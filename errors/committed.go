package errors

import (
	"strings"
)

// CommittedType is the problem `type` of an operation that committed but whose follow-up work
// failed (Committed): a type of its own, so a caller tells it from every other 500 without
// parsing text.
const CommittedType = "urn:lancecat:problem:committed-follow-up-failed"

// Committed is the answer of an operation that committed, but whose follow-up work (recording
// the new object's owner, clearing a dropped object's records, revoking its tuples) failed and
// cannot be undone without breaking what committed.
//
// It answers 500 code 18 (Internal): the spec's 503 means "not ready, wait and retry", which is
// false once something committed (a retried create finds the id taken, a retried rename finds no
// source), and 409 would invite the remote client's retry just the same. Unlike every other
// 5xx, its detail is shown: it is built only from the fields below, which the catalog writes
// (the object's id, the transaction, what is missing, what to do), never from the cause, which
// may name internal addresses and is kept for the server log only.
type Committed struct {
	// Done is what stands, e.g. "table ns$t was created".
	Done string
	// Transaction is the id of the committed transaction, when there is one.
	Transaction string
	// Missing is the follow-up that did not happen, e.g. "its owner could not be recorded".
	Missing []string
	// Remedy is what the caller should do instead of retrying the request.
	Remedy string
	// Cause is the follow-up's failure, for the log.
	Cause error
}

// Error is the catalog-authored message: what stands, what is missing, what to do.
func (c *Committed) Error() string {
	var b strings.Builder
	b.WriteString(c.Done)
	if c.Transaction != "" {
		b.WriteString(" (transaction " + c.Transaction + ")")
	}
	b.WriteString(" and that stands")
	if len(c.Missing) > 0 {
		b.WriteString(", but " + strings.Join(c.Missing, "; "))
	}
	b.WriteString(". Do not retry the request: it committed")
	if c.Remedy != "" {
		b.WriteString("; " + c.Remedy)
	}
	return b.String()
}

// Unwrap is the cause, so errors.Is and the server log see through to it; the translator reads
// the Committed first and never the cause's text.
func (c *Committed) Unwrap() error { return c.Cause }

// context is the machine-readable part of the problem (the spec's ErrorResponse.context).
func (c *Committed) context() map[string]string {
	m := map[string]string{"committed": "true"}
	if c.Transaction != "" {
		m["transaction_id"] = c.Transaction
	}
	return m
}
