package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
)

// DefaultMaxConcurrentWrites bounds the writes a replica runs at once.
const DefaultMaxConcurrentWrites = 16

// shedWrites admits at most limit writes (requests IsReadRequest calls writes) at once; one more
// is refused at once with 429 code 21 and Retry-After: 1, never queued, so a burst of writes
// cannot pile up behind slow commits and take the replica's memory with it. Reads are never shed.
// limit <= 0 admits every write.
func shedWrites(limit int) echo.MiddlewareFunc {
	// One set of slots for the server: Echo wraps the handler in its middleware on every request,
	// so nothing stateful may live inside the returned function.
	slots := make(chan struct{}, max(limit, 0))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if limit <= 0 {
			return next
		}
		return func(c echo.Context) error {
			if IsReadRequest(c.Request().Method, c.Path()) {
				return next(c)
			}
			select {
			case slots <- struct{}{}:
			default:
				c.Response().Header().Set("Retry-After", "1")
				return nserr.Transport(http.StatusTooManyRequests, nserr.Throttling,
					"too many concurrent writes (the limit is "+strconv.Itoa(limit)+"); retry shortly")
			}
			defer func() { <-slots }()
			return next(c)
		}
	}
}
