package server

import (
	"github.com/lancecat/lancecat/guards"
)

// ReadOnlyRetryAfter is the Retry-After (seconds) of a write refused in read-only mode.
const ReadOnlyRetryAfter = guards.ReadOnlyRetryAfter

// IsReadRequest reports whether a request only reads (guards.IsReadRequest): read-only mode and
// write shedding, admission guards of every door, refuse what it calls a write.
func IsReadRequest(method, route string) bool { return guards.IsReadRequest(method, route) }
