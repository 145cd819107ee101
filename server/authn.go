package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
)

// unauthenticatedRoutes answer without identity: probes and metrics scrapers carry none.
var unauthenticatedRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// authenticate turns the transport identity into the request's principal. Authorization off (a
// nil or disabled authenticator): every caller is the anonymous estate admin. On: a request
// without a valid API key or bearer token is refused here, 401 code 16, before any handler runs.
//
// A Lance request may also carry its identity in the body (the spec's `identity` field); with
// authorization on, the header form is required, because the principal is settled before the
// body is read.
func authenticate(a *authz.Authenticator) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			ctx := r.Context()
			p := authz.Anonymous
			if a != nil && a.Enabled && !unauthenticatedRoutes[c.Path()] {
				var err error
				p, err = a.Principal(ctx, authz.IdentityFrom(ctx))
				if err != nil {
					return err
				}
			}
			c.SetRequest(r.WithContext(authz.WithPrincipal(ctx, p)))
			return next(c)
		}
	}
}
