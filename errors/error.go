package errors

import (
	stderrors "errors"
	"fmt"
)

// Error is a domain error carrying a spec code. Its message is what a client may read (for 4xx); the
// wrapped cause is for logs.
type Error struct {
	Code    Code
	Message string
	cause   error
}

// Newf builds an error with code and a printf-style message. A %w verb in format makes the wrapped
// error the cause, so errors.Is/As see through to it.
func Newf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), cause: stderrors.Unwrap(err)}
}

// Wrap gives cause a code and a message without losing it.
func Wrap(code Code, cause error, message string) *Error {
	return &Error{Code: code, Message: message, cause: cause}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.Title()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.cause }

// Is makes the code sentinels (ErrTableNotFound, …) match any error of their code, whatever its
// message: errors.Is(err, ErrTableNotFound).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.Message == "" && t.cause == nil {
		return t.Code == e.Code
	}
	return t == e
}

// CodeOf is the spec code an error carries: its typed error's, or the table's for a package
// sentinel it wraps (table.go); errors without one are Internal.
func CodeOf(err error) Code {
	if code, _, ok := classify(err); ok {
		return code
	}
	return Internal
}

// As, Unwrap and Join are the standard library's, re-exported so callers importing this package
// under its own name need not import both (Is, in table.go, also knows the sentinel table).
var (
	As     = stderrors.As
	Unwrap = stderrors.Unwrap
	Join   = stderrors.Join
)

// New is the standard library's errors.New, for errors that carry no code.
func New(text string) error { return stderrors.New(text) }
