package lance

import (
	"errors"
	"fmt"
)

// Sentinel errors; callers test with errors.Is. This package knows nothing of
// the catalog's error codes: the one table in package errors (nserr) maps each
// sentinel to its spec code, so this package stays free of HTTP concerns.
var (
	// ErrDatasetNotFound: _versions/ holds no manifest.
	ErrDatasetNotFound = errors.New("lance: dataset not found")
	// ErrVersionNotFound: the requested version has no manifest.
	ErrVersionNotFound = errors.New("lance: version not found")
	// ErrCorruptManifest: a manifest file is not a valid Lance manifest.
	ErrCorruptManifest = errors.New("lance: corrupt manifest")
	// ErrMixedNamingSchemes: _versions/ holds both V1 and V2 manifest names.
	// Lance refuses such a directory too (it is a half-finished migration).
	ErrMixedNamingSchemes = errors.New("lance: _versions/ mixes V1 and V2 manifest names")
	// ErrVersionExists: a manifest for that version is already published
	// (another writer won the race for it).
	ErrVersionExists = errors.New("lance: version already exists")
	// ErrRowCountUnknown: a manifest written by an old Lance lacks the row or
	// deletion counts, so rows cannot be counted without reading files.
	ErrRowCountUnknown = errors.New("lance: row count not recorded in manifest")
	// ErrUnsupportedFeature: the dataset uses feature flags (or a data file
	// version) this package does not implement (written by a newer Lance).
	ErrUnsupportedFeature = errors.New("lance: unsupported dataset feature")

	// ErrInvalidInput: the caller asked for something that cannot be done on
	// any dataset (a negative limit, dropping every column, a bad row address).
	ErrInvalidInput = errors.New("lance: invalid input")
	// ErrInvalidTableState: the dataset is in a state the operation refuses
	// (appending without a schema, deleting a branch that has children).
	ErrInvalidTableState = errors.New("lance: invalid table state")
	// ErrColumnNotFound: a named column or field id is not in the schema.
	ErrColumnNotFound = errors.New("lance: column not found")
	// ErrSchemaMismatch: data does not fit the dataset's (or its own) schema.
	ErrSchemaMismatch = errors.New("lance: schema mismatch")
	// ErrTagNotFound and ErrTagExists: a tag is missing, or already there.
	ErrTagNotFound = errors.New("lance: tag not found")
	ErrTagExists   = errors.New("lance: tag already exists")
	// ErrBranchNotFound and ErrBranchExists: a branch is missing, or already there.
	ErrBranchNotFound = errors.New("lance: branch not found")
	ErrBranchExists   = errors.New("lance: branch already exists")
)

// Error is an error of one of the sentinel kinds above with a message written
// for a client: errors.Is(err, Kind) holds, and its text is the message alone
// (the kind classifies it; package errors maps the kind to a spec code and
// shows the message). A %w in the message's format keeps its cause.
type Error struct {
	Kind    error
	Message string
	cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the kind first (the classification), then the cause.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.cause}
}

// Errorf builds an Error of kind; format may use %w to keep a cause.
func Errorf(kind error, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: kind, Message: err.Error(), cause: errors.Unwrap(err)}
}
