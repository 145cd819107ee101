package server

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

	nserr "github.com/lancecat/lancecat/errors"
)

// Body defaults (config.go binds each to a flag).
const (
	// DefaultMaxBodyBytes caps an Arrow IPC upload (--max-body-bytes).
	DefaultMaxBodyBytes = 256 << 20
	// DefaultMaxJSONBodyBytes caps every body that is not an Arrow IPC upload: the largest JSON
	// request of the spec (a query with a long vector and filter) is a few kilobytes.
	DefaultMaxJSONBodyBytes = 8 << 20
	// DefaultMaxBufferedBodyBytes bounds the request bytes every request in flight holds in memory
	// together, with what decoding their Arrow IPC bodies allocates (heldBody.Charge): four of
	// the largest Arrow uploads at once.
	DefaultMaxBufferedBodyBytes = 1 << 30
	// DefaultReadBodyTimeout is what any body gets to arrive (on top of its size allowance at
	// DefaultMinBodyRate): a JSON body arrives in milliseconds, so a minute is only ever reached by
	// a client that stalls or trickles.
	DefaultReadBodyTimeout = 60 * time.Second
	// DefaultMinBodyRate is the slowest upload rate a large body is allowed: every byte received
	// extends the body's deadline by 1/rate s, so a 256 MiB Arrow upload at 1 MiB/s or faster is
	// never cut, while a client trickling a byte every few seconds is cut at the base timeout.
	DefaultMinBodyRate = 1 << 20
	// bodyBudgetWait is how long a request waits for room in the buffered-bytes budget before it
	// is refused with 429 code 21.
	bodyBudgetWait = 2 * time.Second
	// firstBodyChunk is the buffer a body read starts with: a declared length is never allocated
	// before its bytes arrive, so a client that declares a large body and sends nothing costs this.
	firstBodyChunk = 64 << 10
)

// bodyRules read every request body in full before the handler runs: bounded in size (Arrow IPC
// uploads by maxArrow, every other body by maxJSON), in time (a deadline on the connection) and in
// the memory all requests hold together (budget). Reading before the handler means a write slot
// (shedding.go) and the authorization gate are taken only by requests whose body has arrived: a
// slow client costs its own connection and what it has sent, nothing shared.
type bodyRules struct {
	maxArrow, maxJSON int64
	// arrowRoutes are the routes ("POST /v1/table/:id/insert") whose spec body is an Arrow IPC
	// stream; only they get maxArrow.
	arrowRoutes map[string]bool
	budget      *semaphore.Weighted
	budgetBytes int64
	budgetWait  time.Duration
	timeout     time.Duration
	minRate     int64
}

func (b *bodyRules) limitFor(method, route string) int64 {
	if b.arrowRoutes[method+" "+route] {
		return b.maxArrow
	}
	return b.maxJSON
}

// setReadDeadline sets the connection's read deadline; a writer that is not a connection (a test's
// recorder) has nothing to bound.
func setReadDeadline(rc *http.ResponseController, t time.Time) error {
	if err := rc.SetReadDeadline(t); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// bound is the outermost part: a request with a body gets the read deadline at once, so a
// request refused before its body is read (401, 503, 404) cannot hold its connection by trickling
// the body the server drains before answering.
func (b *bodyRules) bound(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			_ = setReadDeadline(http.NewResponseController(c.Response()), time.Now().Add(b.timeout))
		}
		return next(c)
	}
}

func (b *bodyRules) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			return next(c)
		}
		limit := b.limitFor(r.Method, c.Path())
		if r.ContentLength > limit {
			return tooLarge(r.ContentLength, limit)
		}
		body, held, err := b.read(c, limit)
		hb := &heldBody{rules: b, c: c}
		defer func() {
			if n := held + hb.decoded.Load(); n > 0 {
				b.budget.Release(n)
			}
		}()
		if err != nil {
			return err
		}
		if enc := r.Header.Get(echo.HeaderContentEncoding); enc != "" && !strings.EqualFold(enc, "identity") {
			var more int64
			body, more, err = b.decode(c, enc, body, limit)
			held += more
			if err != nil {
				return err
			}
			r.Header.Del(echo.HeaderContentEncoding)
		}
		hb.Reader, hb.body, hb.held = bytes.NewReader(body), body, held
		r.Body = hb
		r.ContentLength = int64(len(body))
		defer pacer().hold(int64(len(body)))()
		return next(c)
	}
}

// decode undoes a request's Content-Encoding (gzip, deflate or zstd: what HTTP clients compress
// bodies with), bounded by the same limit as the body itself (more is 413) and charged to the
// budget as it grows (held: what it took). Another encoding is 415 code 13.
func (b *bodyRules) decode(c echo.Context, enc string, body []byte, limit int64) (out []byte, held int64, err error) {
	var rd io.Reader
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, 0, nserr.InvalidInputf("the body is not gzip (Content-Encoding: %s): %v", enc, err)
		}
		defer zr.Close()
		rd = zr
	case "deflate":
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, 0, nserr.InvalidInputf("the body is not deflate (Content-Encoding: %s): %v", enc, err)
		}
		defer zr.Close()
		rd = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)+1))
		if err != nil {
			return nil, 0, nserr.InvalidInputf("the body is not zstd (Content-Encoding: %s): %v", enc, err)
		}
		defer zr.Close()
		rd = zr
	default:
		return nil, 0, nserr.Transport(http.StatusUnsupportedMediaType, nserr.InvalidInput,
			"Content-Encoding "+strconv.Quote(enc)+" is not supported (gzip, deflate, zstd or identity)")
	}
	buf := make([]byte, 0, min(int64(max(2*len(body), firstBodyChunk)), limit))
	if err := b.reserve(c.Request().Context(), c, int64(cap(buf))); err != nil {
		return nil, 0, err
	}
	held = int64(cap(buf))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= limit {
				var one [1]byte
				if k, _ := io.ReadFull(rd, one[:]); k > 0 {
					return nil, held, tooLarge(-1, limit)
				}
				return buf, held, nil
			}
			next := min(2*int64(cap(buf)), limit)
			if err := b.reserve(c.Request().Context(), c, next-int64(cap(buf))); err != nil {
				return nil, held, err
			}
			held += next - int64(cap(buf))
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		k, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return buf, held, nil
		}
		if err != nil {
			return nil, held, nserr.InvalidInputf("the body does not decode as %s: %v", enc, err)
		}
	}
}

// heldBody is a body read in full by the middleware. Bytes lets a handler that needs the whole
// body (handlers.readBody) take this buffer instead of copying it again: a 100 MB create-table
// body was held twice, plus io.ReadAll's doubling. Charge lets the handler charge what decoding
// it allocates to the same budget (an Arrow IPC body of many small batches, or a compressed one,
// decodes to several times its size).
type heldBody struct {
	*bytes.Reader
	body  []byte
	rules *bodyRules
	c     echo.Context
	// held is what the body's bytes took of the budget; decoded what Charge took, released with
	// it when the request ends.
	held    int64
	decoded atomic.Int64
}

func (h *heldBody) Close() error { return nil }

// Bytes is the whole body; the caller must not modify it.
func (h *heldBody) Bytes() []byte { return h.body }

// Charge takes n more bytes of the buffered-body budget for what decoding the body allocates,
// held until the request ends. A request whose body and decoding together would need more than
// the whole budget is refused with 413; one that must wait past the budget's wait, with 429.
func (h *heldBody) Charge(n int64) error {
	if n <= 0 {
		return nil
	}
	total := h.held + h.decoded.Load() + n
	if total > h.rules.budgetBytes {
		return nserr.Transport(http.StatusRequestEntityTooLarge, nserr.InvalidInput,
			"the request body of "+strconv.Itoa(len(h.body))+" bytes decodes to more memory than the server may hold for request bodies ("+
				strconv.FormatInt(total, 10)+" bytes with the body, the limit is "+strconv.FormatInt(h.rules.budgetBytes, 10)+
				"): send it in several smaller requests")
	}
	if err := h.rules.reserve(h.c.Request().Context(), h.c, n); err != nil {
		return err
	}
	h.decoded.Add(n)
	return nil
}

func tooLarge(n, limit int64) error {
	what := "of " + strconv.FormatInt(n, 10) + " bytes"
	if n < 0 {
		what = "over " + strconv.FormatInt(limit, 10) + " bytes"
	}
	return nserr.Transport(http.StatusRequestEntityTooLarge, nserr.InvalidInput,
		"request body "+what+" exceeds the limit of "+strconv.FormatInt(limit, 10)+" bytes for this operation")
}

// read reads the body under the deadline, charging the budget for the buffer as it grows (never
// for a declared length before it arrives). It returns the body and the budget it holds, which
// the caller releases once the request is done (the handler keeps reading from the buffer).
func (b *bodyRules) read(c echo.Context, limit int64) (body []byte, held int64, err error) {
	r := c.Request()
	rc := http.NewResponseController(c.Response())
	start := time.Now()
	deadline := func(received int) error {
		allowance := time.Duration(float64(received) / float64(b.minRate) * float64(time.Second))
		return setReadDeadline(rc, start.Add(b.timeout+allowance))
	}
	defer func() {
		// Only a body read in full frees the connection of its deadline: the deadline must not
		// outlive the read (the server's background read would end the connection, and cancel the
		// request's context, while the handler runs). A body refused or cut keeps it, so the
		// server's drain of the unread rest (before it answers) cannot be held open by a trickle.
		if err == nil {
			_ = setReadDeadline(rc, time.Time{})
		}
	}()
	if err := deadline(0); err != nil {
		return nil, 0, nserr.Wrap(nserr.Internal, err, "setting the body read deadline")
	}

	declared := r.ContentLength // -1: chunked
	buf := []byte(nil)
	for {
		if len(buf) == cap(buf) {
			n := int64(len(buf))
			if n >= limit || (declared >= 0 && n >= declared) {
				// Full: the body must end here. A declared length ends with EOF from the server's
				// own reader; a chunked body may try to go past the limit.
				var one [1]byte
				k, rerr := r.Body.Read(one[:])
				if k > 0 {
					return nil, held, tooLarge(-1, limit)
				}
				if rerr == io.EOF {
					return buf, held, nil
				}
				if rerr != nil {
					return nil, held, bodyReadFailed(rerr, b.timeout)
				}
				continue
			}
			// The buffer grows by doubling, by four times with a declared length: every step
			// copies what arrived into the next buffer, and until a collection runs the earlier
			// ones stay in memory, so with doubling a 250 MB body reached twice its size in
			// memory (the last two buffers and the garbage below them) before any handler ran;
			// by four it is about 1.3 times. What a client that stops sending holds stays a
			// multiple of what it sent (4 with a declared length, 2 without).
			grow := int64(2)
			if declared >= 0 {
				grow = 4
			}
			next := max(grow*n, firstBodyChunk)
			next = min(next, limit)
			if declared >= 0 {
				next = min(next, declared)
			}
			if err := b.reserve(r.Context(), c, next-n); err != nil {
				return nil, held, err
			}
			held += next - n
			grown := make([]byte, n, next)
			copy(grown, buf)
			buf = grown
		}
		k, rerr := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if rerr == io.EOF {
			return buf, held, nil
		}
		if rerr != nil {
			return nil, held, bodyReadFailed(rerr, b.timeout)
		}
		if err := deadline(len(buf)); err != nil {
			return nil, held, nserr.Wrap(nserr.Internal, err, "setting the body read deadline")
		}
	}
}

// reserve takes n bytes of the buffered-body budget, waiting up to budgetWait for them.
func (b *bodyRules) reserve(ctx context.Context, c echo.Context, n int64) error {
	if b.budget.TryAcquire(n) {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, b.budgetWait)
	defer cancel()
	if err := b.budget.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return nserr.Wrap(nserr.InvalidInput, ctx.Err(), "the request ended while its body was read")
		}
		c.Response().Header().Set("Retry-After", "1")
		return nserr.Transport(http.StatusTooManyRequests, nserr.Throttling,
			"the server holds as many request bodies as it may ("+
				strconv.FormatInt(b.budgetBytes, 10)+" bytes); retry shortly")
	}
	return nil
}

// bodyReadFailed reports a body that did not arrive: too slow (408) or cut off (400).
func bodyReadFailed(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nserr.Transport(http.StatusRequestTimeout, nserr.InvalidInput,
			"the request body did not arrive in time (the read deadline is "+timeout.String()+
				" plus the time its size allows at the minimum upload rate)")
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge(-1, tooBig.Limit)
	}
	return nserr.Transport(http.StatusBadRequest, nserr.InvalidInput, "reading the request body: "+err.Error())
}
