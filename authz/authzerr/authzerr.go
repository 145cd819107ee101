// Package authzerr holds the sentinels the authorization service's failures are translated into.
// They live in a package of their own, importing nothing of lancecat, so the one errors table
// (package errors) can map them to spec codes while package authz itself uses typed errors.
package authzerr

import "errors"

var (
	// ErrUnavailable: the authorization service cannot decide now (it did not answer, refused
	// lancecat's credentials, or lost its store or model). Never an allow.
	ErrUnavailable = errors.New("authorization service unavailable")
	// ErrRefused: the authorization service rejected a request as malformed: lancecat's bug.
	ErrRefused = errors.New("authorization service refused the request")
)
