package handlers

// The transport helpers the control plane (package control) shares with the spec doors, exported
// from their one copy here rather than written twice: answering JSON, reading a body within the
// server's limits, the 406 of an operation nothing backs, the route's id, and the strict JSON
// field check both planes' decoders run.

import (
	"encoding/json"
	"reflect"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/ident"
)

// WriteJSON answers 200 with v as JSON (writeJSON: nil is `{}`).
func WriteJSON(c echo.Context, v any) error { return writeJSON(c, v) }

// ReadBody reads the whole request body (readBody: bounded, 413 past the limit).
func ReadBody(c echo.Context) ([]byte, error) { return readBody(c) }

// NotBacked is the 406 of an operation no backend serves, naming it (notBacked).
func NotBacked(c echo.Context, operation string) error { return notBacked(c, operation) }

// PathID is the route's {id} spelled with delimiter (the server's), after the request's
// delimiter parameter is checked against it (idRules.pathID).
func PathID(c echo.Context, requested *string, delimiter string) (ident.ID, error) {
	return idRules{delimiter: delimiter}.pathID(c, requested)
}

// GoFields adds a struct's JSON field names and Go types to fields (goFields).
func GoFields(t reflect.Type, fields map[string]reflect.Type) { goFields(t, fields) }

// RefuseUnknown is the 400 for the first field of obj that fields does not hold (refuseUnknown).
func RefuseUnknown(obj map[string]json.RawMessage, fields map[string]reflect.Type, path string) error {
	return refuseUnknown(obj, fields, path)
}

// JSONProblem is a decoding error as a client can act on it (jsonProblem).
func JSONProblem(err error) string { return jsonProblem(err) }

// quote is a field name as an error shows it: quoted, control characters escaped, and cut short
// (the name is the caller's, of any length). unknownField's; it stayed here when the control
// plane's decoder, whose file it was in, moved to package control.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
