package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
)

// fromEcho gives Echo's own errors (no route, wrong method, a parameter that does not bind, body
// too large) a spec code (nserr.FromTransport); their HTTP status is a fact of the transport and
// is kept.
func fromEcho(err error) error {
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	msg := http.StatusText(he.Code)
	if s, ok := he.Message.(string); ok && s != "" {
		msg = s
	}
	return nserr.FromTransport(he.Code, msg, err)
}

// causeChain is err's message followed by each cause it wraps that the message does not already
// say: a typed error's message is written for the client, and its cause (the S3 or OpenFGA
// failure behind a 503) is what an operator needs in the log.
func causeChain(err error) string {
	msg := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		if m := cause.Error(); m != "" && !strings.Contains(msg, m) {
			msg += ": " + m
		}
	}
	return msg
}

// writeProblem is the one place an error becomes a response. Server faults are logged in full with
// the request id; the client sees only the redacted problem.
func (s *Server) writeProblem(c echo.Context, err error) nserr.Problem {
	err = fromEcho(err)
	rid := c.Response().Header().Get(echo.HeaderXRequestID)
	p := nserr.ProblemFor(err, c.Request().URL.Path, rid)
	if p.Status >= 500 {
		s.logger.LogAttrs(c.Request().Context(), slog.LevelError, "request failed",
			slog.String("request_id", rid), slog.String("error", causeChain(err)), slog.Int("code", p.Code))
	}
	if c.Response().Committed {
		return p
	}
	c.Response().Header().Set(echo.HeaderContentType, nserr.ProblemContentType)
	if c.Request().Method == http.MethodHead {
		c.Response().WriteHeader(p.Status)
		return p
	}
	if werr := c.JSON(p.Status, p); werr != nil {
		s.logger.Warn("writing a problem response", slog.String("request_id", rid), slog.String("error", werr.Error()))
	}
	return p
}
