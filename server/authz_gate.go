package server

import (
	"github.com/labstack/echo/v4"
)

// specOperation names the Lance spec operation a routed request is, for the authorization gate of
// the spec doors (handlers.Server.Gate). Control routes are not spec operations: they check their
// own doors.
func specOperation(ops []Operation) func(c echo.Context) (string, bool) {
	idx := newOperationIndex(ops)
	return func(c echo.Context) (string, bool) {
		id, ok := idx[c.Request().Method+" "+c.Path()]
		return id, ok
	}
}
