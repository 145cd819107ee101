package server

import (
	"errors"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// unauthenticatedRoutes answer without identity: probes carry none. (Metrics and profiles are not
// on this port at all: OpsHandler, on the operations listener.)
var unauthenticatedRoutes = map[string]bool{"/healthz": true, "/readyz": true}

// authenticate turns the transport identity into the request's principal. Authorization off (a
// nil or disabled authenticator): every caller is the anonymous estate admin. On: a request
// without a valid API key or bearer token is refused here, 401 code 16, before any handler runs.
//
// A Lance request may also carry its identity in the body (the spec's `identity` field); with
// authorization on, the header form is required, because the principal is settled before the
// body is read.
//
// A refusal tells the caller only that its credential was not accepted; why (a wrong audience or
// issuer, an unknown key) is logged with the request id, never answered: an unauthenticated
// caller must not learn what the server expects.
func authenticate(a *authz.Authenticator, logger *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			ctx := r.Context()
			p := authz.Anonymous
			if a != nil && a.Enabled && !unauthenticatedRoutes[c.Path()] {
				var err error
				p, err = a.Principal(ctx, authz.IdentityFrom(ctx))
				if err != nil {
					if nserr.CodeOf(err) == nserr.Unauthenticated {
						logger.LogAttrs(ctx, slog.LevelInfo, "authentication refused",
							slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
							slog.String("reason", reason(err)))
					}
					return err
				}
			}
			// Each request gets its own decision memo: it never asks OpenFGA the same question twice.
			c.SetRequest(r.WithContext(authz.WithDecisions(authz.WithPrincipal(ctx, p))))
			return next(c)
		}
	}
}

// reason is an error with its causes, for the log: the client-facing message of a refusal is
// generic, its cause is what went wrong.
func reason(err error) string {
	msg := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		if c := cause.Error(); c != msg {
			msg += ": " + c
		}
		err = cause
	}
	return msg
}
