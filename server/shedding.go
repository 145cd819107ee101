package server

import (
	"github.com/lancecat/lancecat/guards"
)

// DefaultMaxConcurrentWrites bounds the writes a replica runs at once (guards.Shedder).
const DefaultMaxConcurrentWrites = guards.DefaultMaxConcurrentWrites
