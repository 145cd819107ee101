package expr

import (
	"fmt"

	nserr "github.com/lancecat/lancecat/errors"
)

// Error is a parse, bind or evaluation error of an expression. Pos is the byte offset in the source
// text (-1 when unknown); Column names the column involved, if any.
type Error struct {
	Pos    int
	Column string
	Msg    string
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Column != "" {
		s += fmt.Sprintf(" (column %q)", e.Column)
	}
	if e.Pos >= 0 {
		s += fmt.Sprintf(" at position %d", e.Pos)
	}
	return s
}

// errorf builds an *Error wrapped as InvalidInput (code 13, HTTP 400), so the server maps it without
// knowing this package.
func errorf(pos int, column, format string, args ...any) error {
	e := &Error{Pos: pos, Column: column, Msg: fmt.Sprintf(format, args...)}
	return nserr.Wrap(nserr.InvalidInput, e, "invalid expression: "+e.Error())
}
