package guards

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
)

// ReadOnlyRetryAfter is the Retry-After (seconds) of a write refused in read-only mode.
const ReadOnlyRetryAfter = 60

// RetryLater is an admission refusal: the request may succeed as sent after After seconds (the
// transport writes it as Retry-After).
type RetryLater struct {
	Err   error
	After int
}

func (e *RetryLater) Error() string { return e.Err.Error() }
func (e *RetryLater) Unwrap() error { return e.Err }

// readActions are the trailing route actions that only read, whatever their method (the Lance spec
// reads with POST: describe, list, query…). The list is an allow-list and fails closed: a route
// whose action is not here is a write, so a new verb is refused in read-only mode and shed under
// load until someone adds it on purpose.
var readActions = map[string]bool{
	"describe":       true,
	"exists":         true,
	"list":           true,
	"count_rows":     true,
	"query":          true,
	"stats":          true,
	"explain_plan":   true,
	"analyze_plan":   true,
	"tasks":          true,
	"my-permissions": true,
	"check":          true,
	"graph":          true,
	"preview":        true,
	// The LanceDB remote client's reads of a table's (absent) LSM state (issue 34).
	"get_lsm_write_spec": true,
	"get_lsm_stats":      true,
	// Prewarming an index or the data a scan reads fills caches, nothing durable.
	"prewarm": true,
	"diff":    true, // branches/diff: a comparison of two branches
}

// readSuffixes are two-segment actions that read although their last segment alone says nothing.
var readSuffixes = map[string]bool{
	"tags/version": true, // GetTableTagVersion
}

// IsReadRequest reports whether a request only reads: its method is GET, HEAD or OPTIONS, or the
// action its route ends with is a read (readActions). route is the matched Echo route template
// ("/v1/table/:id/describe"), never the request path, so an id can never make a write look like
// a read. An unmatched request ("" or no action) is a write.
func IsReadRequest(method, route string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	var actions []string
	for seg := range strings.SplitSeq(route, "/") {
		if seg != "" && !strings.HasPrefix(seg, ":") && !strings.HasPrefix(seg, "*") {
			actions = append(actions, seg)
		} else if strings.HasPrefix(seg, ":") {
			actions = actions[:0] // only what follows the last parameter is the action
		}
	}
	if len(actions) == 0 {
		return false
	}
	last := actions[len(actions)-1]
	if len(actions) >= 2 && readSuffixes[actions[len(actions)-2]+"/"+last] {
		return true
	}
	return readActions[last]
}

// ReadOnly is the read-only mode guard (maintenance mode): every request that is not a read
// (IsReadRequest) is refused with 503 code 17 and Retry-After; reads pass. enabled false: nil.
func ReadOnly(enabled bool) *Guard {
	if !enabled {
		return nil
	}
	return &Guard{StageMode, "read-only", func(_ context.Context, r *Request) error {
		if IsReadRequest(r.Method, r.Route) {
			return nil
		}
		return &RetryLater{After: ReadOnlyRetryAfter, Err: nserr.Transport(http.StatusServiceUnavailable, nserr.ServiceUnavailable,
			"the catalog is in read-only maintenance mode: "+r.Method+" "+r.Route+" writes; retry later")}
	}}
}

// DefaultMaxConcurrentWrites bounds the writes a replica runs at once.
const DefaultMaxConcurrentWrites = 16

// Shedder admits at most limit writes (requests IsReadRequest calls writes) at once; one more is
// refused at once with 429 code 21 and Retry-After: 1, never queued, so a burst of writes cannot
// pile up behind slow commits and take the replica's memory with it. Reads are never shed.
type Shedder struct {
	limit int
	slots chan struct{}
}

// NewShedder returns the write slots of a server; limit <= 0 admits every write (nil).
func NewShedder(limit int) *Shedder {
	if limit <= 0 {
		return nil
	}
	return &Shedder{limit: limit, slots: make(chan struct{}, limit)}
}

// Guard is the shedding admission guard: a write takes a slot until the request is done
// (Request.Defer).
func (s *Shedder) Guard() *Guard {
	if s == nil {
		return nil
	}
	return &Guard{StageAdmission, "write shedding", func(_ context.Context, r *Request) error {
		if IsReadRequest(r.Method, r.Route) {
			return nil
		}
		select {
		case s.slots <- struct{}{}:
			r.Defer(func() { <-s.slots })
			return nil
		default:
			return &RetryLater{After: 1, Err: nserr.Transport(http.StatusTooManyRequests, nserr.Throttling,
				"too many concurrent writes (the limit is "+strconv.Itoa(s.limit)+"); retry shortly")}
		}
	}}
}

// around wraps a door's guards (identity guards first, if any) with the replica's: read-only
// mode right after identity, write shedding last.
func (d Deps) around(c Chain) Chain {
	var identity, rest Chain
	for _, g := range c {
		if g.Stage == StageIdentity {
			identity = append(identity, g)
		} else {
			rest = append(rest, g)
		}
	}
	out := append(Chain(nil), identity...)
	if g := ReadOnly(d.ReadOnly); g != nil {
		out = append(out, *g)
	}
	out = append(out, rest...)
	if g := d.Shed.Guard(); g != nil {
		out = append(out, *g)
	}
	return NewChain(out...)
}

// UnroutedChain is the chain of a request that is no operation (a probe, an unrouted path): the
// replica's guards only, so an unrouted write fails closed in read-only mode.
func UnroutedChain(d Deps) Chain { return d.around(nil) }
