// Package errors is the error contract of lancecat: one typed error per Lance Namespace error code
// (0–23), and the one translation of those errors into RFC 9457 problem bodies with the spec's code.
//
// The catalog's layers return these errors (wrapped with %w as they like). The layers below it
// (lance, storage, registry, the authorization service's client) know nothing of codes: they
// return their own sentinels, and the one table in table.go maps those to codes. CodeOf and
// ProblemFor read both; only the translator decides HTTP statuses, so a domain error can never
// leave with a hand-picked status.
package errors

import (
	"net/http"
	"strconv"
)

// Code is a Lance Namespace error code. Clients dispatch on it, not on the HTTP status.
type Code int

// The 24 codes of the Lance Namespace spec (spec.yaml, ErrorResponse.code).
const (
	Unsupported                Code = 0
	NamespaceNotFound          Code = 1
	NamespaceAlreadyExists     Code = 2
	NamespaceNotEmpty          Code = 3
	TableNotFound              Code = 4
	TableAlreadyExists         Code = 5
	TableIndexNotFound         Code = 6
	TableIndexAlreadyExists    Code = 7
	TableTagNotFound           Code = 8
	TableTagAlreadyExists      Code = 9
	TransactionNotFound        Code = 10
	TableVersionNotFound       Code = 11
	TableColumnNotFound        Code = 12
	InvalidInput               Code = 13
	ConcurrentModification     Code = 14
	PermissionDenied           Code = 15
	Unauthenticated            Code = 16
	ServiceUnavailable         Code = 17
	Internal                   Code = 18
	InvalidTableState          Code = 19
	TableSchemaValidationError Code = 20
	Throttling                 Code = 21
	TableBranchNotFound        Code = 22
	TableBranchAlreadyExists   Code = 23
)

type codeInfo struct {
	name   string
	title  string
	status int
}

// codes is the whole contract in one table: name as the spec spells it, a human title, and the
// HTTP status (../shared/DESIGN.md, "Error contract").
var codes = [...]codeInfo{
	Unsupported:                {"Unsupported", "Operation not supported", http.StatusNotAcceptable},
	NamespaceNotFound:          {"NamespaceNotFound", "Namespace not found", http.StatusNotFound},
	NamespaceAlreadyExists:     {"NamespaceAlreadyExists", "Namespace already exists", http.StatusConflict},
	NamespaceNotEmpty:          {"NamespaceNotEmpty", "Namespace not empty", http.StatusConflict},
	TableNotFound:              {"TableNotFound", "Table not found", http.StatusNotFound},
	TableAlreadyExists:         {"TableAlreadyExists", "Table already exists", http.StatusConflict},
	TableIndexNotFound:         {"TableIndexNotFound", "Table index not found", http.StatusNotFound},
	TableIndexAlreadyExists:    {"TableIndexAlreadyExists", "Table index already exists", http.StatusConflict},
	TableTagNotFound:           {"TableTagNotFound", "Table tag not found", http.StatusNotFound},
	TableTagAlreadyExists:      {"TableTagAlreadyExists", "Table tag already exists", http.StatusConflict},
	TransactionNotFound:        {"TransactionNotFound", "Transaction not found", http.StatusNotFound},
	TableVersionNotFound:       {"TableVersionNotFound", "Table version not found", http.StatusNotFound},
	TableColumnNotFound:        {"TableColumnNotFound", "Table column not found", http.StatusNotFound},
	InvalidInput:               {"InvalidInput", "Invalid input", http.StatusBadRequest},
	ConcurrentModification:     {"ConcurrentModification", "Concurrent modification", http.StatusConflict},
	PermissionDenied:           {"PermissionDenied", "Permission denied", http.StatusForbidden},
	Unauthenticated:            {"Unauthenticated", "Unauthenticated", http.StatusUnauthorized},
	ServiceUnavailable:         {"ServiceUnavailable", "Service unavailable", http.StatusServiceUnavailable},
	Internal:                   {"Internal", "Internal error", http.StatusInternalServerError},
	InvalidTableState:          {"InvalidTableState", "Invalid table state", http.StatusConflict},
	TableSchemaValidationError: {"TableSchemaValidationError", "Table schema validation error", http.StatusBadRequest},
	Throttling:                 {"Throttling", "Too many requests", http.StatusTooManyRequests},
	TableBranchNotFound:        {"TableBranchNotFound", "Table branch not found", http.StatusNotFound},
	TableBranchAlreadyExists:   {"TableBranchAlreadyExists", "Table branch already exists", http.StatusConflict},
}

// Codes lists every code of the contract, in order.
func Codes() []Code {
	out := make([]Code, len(codes))
	for i := range codes {
		out[i] = Code(i)
	}
	return out
}

// Valid reports whether c is one of the spec's codes.
func (c Code) Valid() bool { return c >= 0 && int(c) < len(codes) }

func (c Code) info() codeInfo {
	if !c.Valid() {
		return codes[Internal]
	}
	return codes[c]
}

// Name is the code's name as the spec spells it, e.g. "TableNotFound".
func (c Code) Name() string { return c.info().name }

// Title is a short human summary of the code, used as the problem title.
func (c Code) Title() string { return c.info().title }

// HTTPStatus is the status a code travels with. Codes outside the spec are internal errors.
func (c Code) HTTPStatus() int { return c.info().status }

func (c Code) String() string {
	if !c.Valid() {
		return "Code(" + strconv.Itoa(int(c)) + ")"
	}
	return c.Name()
}
