package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/internal/telemetry"
)

// Telemetry is what the server reports to besides its own request metrics: the tracing
// (internal/telemetry; the zero value is off) and the collectors of the calls it makes (OpenFGA,
// the object store), served on /metrics beside its own.
type Telemetry struct {
	Tracing    telemetry.Tracing
	Collectors []prometheus.Collector
}

// tracerName is the instrumentation scope of the server's spans.
const tracerName = "github.com/lancecat/lancecat/server"

// The span tree of one routed request (all but the first only when the route is an operation):
//
//	POST /v1/table/:id/describe     the request (server kind): route, operation, status
//	├── guards                      the door's guard chain
//	│   ├── guard read-only         one per guard; the one that refused has status Error
//	│   └── guard authorize …       (its OpenFGA calls below it)
//	└── DescribeTable               the catalog operation: the handler behind the guards
//	    └── storage get …           its object-store calls (storage.Instrument), S3 HTTP below
//
// A request that carries a W3C traceparent continues that trace.

// startRequest opens the request's span, continuing the caller's trace; off: ctx, nil.
func (s *Server) startRequest(ctx context.Context, req *http.Request, route, op, rid string) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	ctx = s.tracing.Extract(ctx, req.Header)
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", spanMethod(req.Method)),
		attribute.String("lancecat.operation", op),
		attribute.String("lancecat.request_id", rid),
	}
	if s.routes[route] {
		attrs = append(attrs, attribute.String("http.route", route))
	}
	return s.tracer.Start(ctx, requestSpanName(req.Method, route, s.routes[route]),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// endRequest closes the request's span with the answer's status (a 5xx is an error, a 4xx the
// caller's: OTel's server-span rule) and error code.
func endRequest(span trace.Span, status int, code *int) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if code != nil {
		span.SetAttributes(attribute.Int("lancecat.error_code", *code))
	}
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// requestSpanName is OTel's HTTP server span name, "{method} {route}": the route template, never
// the path; a request no route matched is named by its method alone.
func requestSpanName(method, route string, routed bool) string {
	if !routed {
		return spanMethod(method)
	}
	return spanMethod(method) + " " + route
}

// spanMethod is the method, or "_OTHER" for one that is not standard (OTel's convention, which
// keeps span names bounded too).
func spanMethod(m string) string {
	if standardMethods[m] {
		return m
	}
	return "_OTHER"
}

// tracedChain is c with each guard's check in a span of its own ("guard read-only", "guard
// authorize describe": the guards' names are code, so bounded). nil tracer: c itself.
func tracedChain(c guards.Chain, tracer trace.Tracer) guards.Chain {
	if tracer == nil || len(c) == 0 {
		return c
	}
	out := make(guards.Chain, len(c))
	for i, g := range c {
		check, name, stage := g.Check, "guard "+g.Name, attribute.String("lancecat.guard.stage", g.Stage.String())
		g.Check = func(ctx context.Context, r *guards.Request) error {
			ctx, span := tracer.Start(ctx, name, trace.WithAttributes(stage))
			defer span.End()
			err := check(ctx, r)
			if err != nil {
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		}
		out[i] = g
	}
	return out
}

// runTraced runs the door's guard chain in a "guards" span and then the operation's handler (the
// catalog operation) in a span named for the operation.
func runTraced(c echo.Context, tracer trace.Tracer, op string, guard func(context.Context) (func(), error), next echo.HandlerFunc) error {
	req := c.Request()
	opAttr := attribute.String("lancecat.operation", op)
	gctx, gspan := tracer.Start(req.Context(), "guards", trace.WithAttributes(opAttr))
	done, err := guard(gctx)
	defer done()
	if err != nil {
		gspan.SetStatus(codes.Error, err.Error())
		gspan.End()
		return err
	}
	gspan.End()
	if op == "" {
		return next(c)
	}
	octx, ospan := tracer.Start(req.Context(), op, trace.WithAttributes(opAttr))
	defer ospan.End()
	c.SetRequest(req.WithContext(octx))
	err = next(c)
	if err != nil {
		ospan.SetStatus(codes.Error, err.Error())
	}
	return err
}
