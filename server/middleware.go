package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/handlers"
)

// routeOnRawPath makes Echo route and extract parameters on the escaped path. Without it a
// name holding an escaped "/" (%2F) would split into two path segments and miss its route, and
// "%25" would be decoded twice. A trailing slash is dropped here too, on both forms at once (the
// REST docs write ListAllTables as `GET /v1/table/`, the spec as `/v1/table`); Echo's own
// trailing-slash middleware would re-encode the path and lose the client's escaping.
func routeOnRawPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		raw := u.EscapedPath()
		slash := len(raw) > 1 && strings.HasSuffix(raw, "/")
		if slash {
			raw = strings.TrimSuffix(raw, "/")
			u.Path = strings.TrimSuffix(u.Path, "/")
		}
		u.RawPath = raw
		// The trailing slash is how a LanceDB remote-mode client spells every table route: the
		// handlers answer that dialect's reply shapes where the two clients differ.
		c.SetRequest(handlers.MarkRemote(c.Request(), slash))
		// Every answer says it: the remote client takes the version from whichever answer
		// first created its table handle (list, create, open).
		c.Response().Header().Set(handlers.ServerVersionHeader, handlers.ServerVersion)
		return next(c)
	}
}

// requestID echoes a sane incoming x-request-id or mints one, so a client's log line and ours
// share an id.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rid := c.Request().Header.Get(echo.HeaderXRequestID)
		if !saneRequestID(rid) {
			rid = newRequestID()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, rid)
		r := c.Request()
		c.SetRequest(r.WithContext(withRequestID(r.Context(), rid)))
		return next(c)
	}
}

func saneRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// identity reads the transport identity (x-api-key, Authorization: Bearer) into the request
// context; handlers fold a body identity under it.
func identity(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(authz.WithIdentity(r.Context(), authz.IdentityFromHeaders(r.Header))))
		return next(c)
	}
}

// observe is the outermost routed middleware: it turns a returned error into its problem response
// (so the status and code are known here), then logs the request and records its metrics. With
// tracing on the request runs in its span (tracing.go), continuing an incoming traceparent.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		req := c.Request()
		op := s.operationLabel(req.Method, c.Path())
		rid := c.Response().Header().Get(echo.HeaderXRequestID)
		ctx, span := s.startRequest(req.Context(), req, c.Path(), op, rid)
		if span != nil {
			c.SetRequest(req.WithContext(ctx))
		}
		if s.logger.Enabled(ctx, slog.LevelDebug) {
			s.logger.LogAttrs(ctx, slog.LevelDebug, "request start", slog.String("request_id", rid),
				slog.String("method", clipLogged(req.Method, maxLoggedMethod)), slog.String("path", clipLogged(req.URL.Path, maxLoggedPath)),
				slog.String("operation", op), slog.Int64("content_length", req.ContentLength))
		}
		err := next(c)
		var code *int
		if err != nil {
			p := s.writeProblem(c, err)
			code = &p.Code
		}
		took := time.Since(start)
		req, res := c.Request(), c.Response()
		s.metrics.observe(op, res.Status, code, took)
		endRequest(span, res.Status, code)
		attrs := []slog.Attr{
			slog.String("request_id", rid),
			slog.String("method", clipLogged(req.Method, maxLoggedMethod)),
			slog.String("path", clipLogged(req.URL.Path, maxLoggedPath)),
			slog.String("operation", op),
			slog.Int("status", res.Status),
			slog.Int64("bytes_out", res.Size),
			slog.Duration("duration", took),
			slog.String("remote", c.RealIP()),
			// "" when the request was refused before its principal was known (a 401).
			slog.String("principal", authz.PrincipalFrom(req.Context()).String()),
		}
		if code != nil {
			attrs = append(attrs, slog.Int("code", *code))
		}
		if span != nil {
			attrs = append(attrs, slog.String("trace_id", span.SpanContext().TraceID().String()))
		}
		s.logger.LogAttrs(req.Context(), slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// The longest method and path an access line copies: a client may send an 8 KB method to any
// door (issue 11 item 5); the line keeps a recognisable prefix and the length, never the bulk.
const (
	maxLoggedMethod = 32
	maxLoggedPath   = 2048
)

// clipLogged is s, or its first max bytes (cut on a rune boundary) followed by the length of s.
func clipLogged(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// DefaultIdleTimeout closes a keep-alive connection idle that long.
const DefaultIdleTimeout = 2 * time.Minute

// ipExtractor is where the access log's `remote` comes from: the peer address, or, when the peer
// is one of the trusted proxies, the client X-Forwarded-For names (the nearest untrusted hop).
// Echo's default trusts the headers from anyone, so any client could write the log's remote.
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
