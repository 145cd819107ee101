package handlers

// The transport helpers the control plane (package control) shares with the spec doors, exported
// from their one copy here rather than written twice: answering JSON, reading a body within the
// server's limits, the 406 of an operation nothing backs and the route's id. The strict JSON
// field check both planes' decoders run is package wire's.

import (
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
