// Package faults is a test hook for crash tests: a named point in a multi-step operation where
// the process kills itself, so a test can re-exec its own binary, let it die mid-operation, and
// check what a restart finds. It is off unless the environment variable LANCECAT_FAULT_KILL
// names a point: "name" kills at the first time the point is reached, "name:N" at the N-th time
// (1-based). The kill is SIGKILL to ourselves (no deferred calls, no flush), exactly what a
// replica losing its machine looks like. Production never sets the variable; the check is one
// atomic load.
package faults

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// EnvKill is the environment variable naming the kill point.
const EnvKill = "LANCECAT_FAULT_KILL"

var (
	once   sync.Once
	armed  atomic.Bool
	point  string
	target int64
	hits   atomic.Int64
)

func load() {
	v := os.Getenv(EnvKill)
	if v == "" {
		return
	}
	point, target = v, 1
	if name, n, ok := strings.Cut(v, ":"); ok {
		if k, err := strconv.ParseInt(n, 10, 64); err == nil && k > 0 {
			point, target = name, k
		}
	}
	armed.Store(true)
}

// Point is a named kill point: when armed for name and this is the N-th time it is reached,
// the process SIGKILLs itself.
func Point(name string) {
	once.Do(load)
	if !armed.Load() || name != point {
		return
	}
	if hits.Add(1) == target {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill() // SIGKILL on unix
		}
		select {} // the signal is delivered asynchronously: never return into the operation
	}
}
