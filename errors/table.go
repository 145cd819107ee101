package errors

import (
	stderrors "errors"
	"fmt"

	"github.com/lancecat/lancecat/authz/authzerr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/registry"
)

// Sentinel is one row of the translation table: a package's sentinel error and the spec code it
// means wherever it reaches a client.
type Sentinel struct {
	Err  error
	Code Code
}

// sentinels is the ONE table from the sentinels of the packages below the catalog (lance,
// registry, authz's authorization service) to spec codes. Those packages know nothing of codes: they return their sentinels,
// wrapped with context or carried by a message-bearing error (lance.Error), and CodeOf and
// ProblemFor read this table. A sentinel not listed here is an internal error (code 18), so
// adding a row is a decision about what a client may be told.
//
// storage's sentinels are not listed: each caller (lance, namespace, governance) decides what a
// missing or raced object means in its own terms; one that escapes raw is a server fault.
var sentinels = []Sentinel{
	// lance: the dataset and its versions.
	{lance.ErrDatasetNotFound, TableVersionNotFound},
	{lance.ErrVersionNotFound, TableVersionNotFound},
	{lance.ErrVersionExists, ConcurrentModification},
	{lance.ErrCommitConflict, ConcurrentModification},
	// A row-level conflict dml retries itself; one that outlives its retries is a conflict the
	// client may retry.
	{lance.ErrRetryableConflict, ConcurrentModification},
	{lance.ErrDatasetExists, TableAlreadyExists},
	{lance.ErrUnsupportedFeature, Unsupported},
	// lance: requests and data that do not fit the dataset.
	{lance.ErrInvalidInput, InvalidInput},
	{lance.ErrInvalidRef, InvalidInput},
	{lance.ErrInvalidTableState, InvalidTableState},
	{lance.ErrColumnNotFound, TableColumnNotFound},
	{lance.ErrSchemaMismatch, TableSchemaValidationError},
	// lance: tags and branches.
	{lance.ErrTagNotFound, TableTagNotFound},
	{lance.ErrTagExists, TableTagAlreadyExists},
	{lance.ErrBranchNotFound, TableBranchNotFound},
	{lance.ErrBranchExists, TableBranchAlreadyExists},
	// lance: indices.
	{lance.ErrIndexNotFound, TableIndexNotFound},
	{lance.ErrIndexExists, TableIndexAlreadyExists},
	// authz: the authorization service's failures (authz/openfga_errors.go translates OpenFGA's
	// errors into these): "cannot decide now", never an allow; a request it refused is our bug.
	{authzerr.ErrUnavailable, ServiceUnavailable},
	{authzerr.ErrRefused, Internal},
	// registry: a control record that exists but cannot be trusted is "cannot decide now", so no
	// caller reads it as absent and acts on that.
	{registry.ErrMalformed, ServiceUnavailable},
}

// Sentinels is a copy of the translation table, in order.
func Sentinels() []Sentinel { return append([]Sentinel(nil), sentinels...) }

// sentinelCode is the code of err when err itself is a sentinel of the table.
func sentinelCode(err error) (Code, bool) {
	for _, s := range sentinels {
		if err == s.Err {
			return s.Code, true
		}
	}
	return 0, false
}

// classify finds the error that decides err's code: the first, walking err's tree as errors.As
// does, that is a typed *Error or a sentinel of the table. detail is the message a client may
// read: a typed error's own, or for a sentinel the message of the error that wraps it directly
// (lance.Error's message, or "lance: version not found: version 7"), not the context wrappers
// further out, which are for logs (as a typed error's wrappers are).
func classify(err error) (code Code, detail string, ok bool) {
	code, detail, _, ok = decide(err)
	return code, detail, ok
}

// decide is classify, also answering the Committed that decided the code, if one did: a
// Committed is code 18 and its own (catalog-authored) message is the detail, whatever its cause.
func decide(err error) (code Code, detail string, committed *Committed, ok bool) {
	var visit func(err, parent error) bool
	visit = func(err, parent error) bool {
		for err != nil {
			if c, isCommitted := err.(*Committed); isCommitted {
				code, detail, committed, ok = Internal, c.Error(), c, true
				return true
			}
			if e, isTyped := err.(*Error); isTyped && e.Code.Valid() {
				code, detail, ok = e.Code, e.Error(), true
				return true
			}
			if c, hit := sentinelCode(err); hit {
				code, detail, ok = c, err.Error(), true
				if parent != nil {
					detail = parent.Error()
				}
				return true
			}
			switch u := err.(type) {
			case interface{ Unwrap() error }:
				parent, err = err, u.Unwrap()
			case interface{ Unwrap() []error }:
				for _, child := range u.Unwrap() {
					if visit(child, err) {
						return true
					}
				}
				return false
			default:
				return false
			}
		}
		return false
	}
	visit(err, nil)
	return code, detail, committed, ok
}

// Coded reports whether err carries a spec code: a typed error, or a sentinel of the table. A
// translator that gives uncoded failures a code of its own (say ServiceUnavailable for a store
// that did not answer) passes coded ones through.
func Coded(err error) bool {
	_, _, ok := classify(err)
	return ok
}

// Is is the standard library's errors.Is, and also true when target is a code sentinel
// (ErrTableTagNotFound, …) and err wraps a sentinel the table maps to that code: a caller asks
// "is this a missing tag" without knowing which package said so.
func Is(err, target error) bool {
	if stderrors.Is(err, target) {
		return true
	}
	t, ok := target.(*Error)
	if !ok || t.Message != "" || t.cause != nil {
		return false
	}
	for _, s := range sentinels {
		if s.Code == t.Code && stderrors.Is(err, s.Err) {
			return true
		}
	}
	return false
}

// Describef gives err a message for the client and keeps its code (the table's, or its typed
// error's; Internal when it has none): context a layer adds for the client, such as the table a
// lance error is about, without that layer choosing the code again.
func Describef(err error, format string, args ...any) *Error {
	return &Error{Code: CodeOf(err), Message: fmt.Sprintf(format, args...), cause: err}
}

// Otherwise is err when it already carries a code (Coded), else err given code and message: the
// translators that give a layer's uncoded failures a default answer (a control root that did not
// answer is 503, a credential a verifier refused is 401) and let every coded error through.
func Otherwise(code Code, err error, message string) error {
	if err == nil || Coded(err) {
		return err
	}
	return Wrap(code, err, message)
}
