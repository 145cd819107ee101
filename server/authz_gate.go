package server

import (
	"context"
	"errors"
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/guards"
)

// doorGuards runs the guard chain (package guards) of every routed request, once its principal is
// known and its body has arrived: a spec operation runs guards.SpecChain, a control operation
// guards.ControlChain (nil control deps: only the replica's guards, the door answers 406 itself);
// a request that is no operation (a probe, an unrouted path) runs unrouted (read-only mode and
// write shedding), so an unrouted write fails closed. The chains are built once, from the door
// tables. A write slot is held until the handler is done. The request the chain passed is handed
// on to the handler (guards.WithRequest): it acts on the id the chain parsed.
//
// With a tracer (tracing on) the chain runs in a "guards" span, each guard in one of its own, and
// the handler in a span named for the operation (tracing.go).
func doorGuards(spec, control []Operation, specDeps guards.Deps, controlDeps *guards.Deps, unrouted guards.Chain, tracer trace.Tracer) echo.MiddlewareFunc {
	type door struct {
		op    string
		chain guards.Chain
	}
	doors := map[string]door{}
	for _, o := range spec {
		doors[o.Method+" "+o.EchoPath()] = door{o.ID, tracedChain(guards.SpecChain(o.ID, specDeps), tracer)}
	}
	for _, o := range control {
		chain := unrouted
		if controlDeps != nil {
			chain = guards.ControlChain(o.ID, *controlDeps)
		}
		doors[o.Method+" "+o.EchoPath()] = door{o.ID, tracedChain(chain, tracer)}
	}
	unrouted = tracedChain(unrouted, tracer)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			d, ok := doors[req.Method+" "+c.Path()]
			if !ok {
				d = door{chain: unrouted}
			}
			if len(d.chain) == 0 {
				return next(c)
			}
			ctx := req.Context()
			r := &guards.Request{
				Op: d.op, Method: req.Method, Route: c.Path(), Param: c.Param,
				Query: func(name string) (string, bool) {
					v, ok := c.QueryParams()[name]
					if !ok || len(v) == 0 {
						return "", ok
					}
					return v[0], true
				},
				Principal: authz.PrincipalFrom(ctx),
			}
			if tracer != nil {
				handOn := func(c echo.Context) error {
					c.SetRequest(c.Request().WithContext(guards.WithRequest(c.Request().Context(), r)))
					return next(c)
				}
				return runTraced(c, tracer, d.op, func(ctx context.Context) (func(), error) {
					done, err := d.chain.Run(ctx, r)
					retryAfter(c, err)
					return done, err
				}, handOn)
			}
			done, err := d.chain.Run(ctx, r)
			defer done()
			if err != nil {
				retryAfter(c, err)
				return err
			}
			c.SetRequest(req.WithContext(guards.WithRequest(ctx, r)))
			return next(c)
		}
	}
}

// retryAfter sets Retry-After on the answer of a refusal that says when to come back.
func retryAfter(c echo.Context, err error) {
	var later *guards.RetryLater
	if errors.As(err, &later) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(later.After))
	}
}
