package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
)

// ReadOnlyRetryAfter is the Retry-After (seconds) of a write refused in read-only mode.
const ReadOnlyRetryAfter = 60

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

// readOnly is maintenance mode: every request that is not a read (IsReadRequest) is refused with
// 503 code 17 and Retry-After; reads are served as usual. Operational endpoints are GETs.
func readOnly(enabled bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if !enabled {
			return next
		}
		return func(c echo.Context) error {
			r := c.Request()
			if IsReadRequest(r.Method, c.Path()) {
				return next(c)
			}
			c.Response().Header().Set("Retry-After", strconv.Itoa(ReadOnlyRetryAfter))
			return nserr.Transport(http.StatusServiceUnavailable, nserr.ServiceUnavailable,
				"the catalog is in read-only maintenance mode: "+r.Method+" "+c.Path()+" writes; retry later")
		}
	}
}
