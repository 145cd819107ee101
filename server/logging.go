package server

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

type requestIDKey struct{}

// withRequestID stores the request id in ctx, so log lines written deeper down (the audit log)
// carry it.
func withRequestID(ctx context.Context, rid string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, rid)
}

// LogRequestIDs makes h add the request id (and trace id) of the context a line is logged with (requestIDHandler):
// for loggers used deeper down than the access log, such as the authorizer's audit log.
func LogRequestIDs(h slog.Handler) slog.Handler { return requestIDHandler{h} }

// requestIDHandler adds the request id of the context a line is logged with, so every audit line
// joins with its request's access line.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if rid, ok := ctx.Value(requestIDKey{}).(string); ok && rid != "" {
		r.AddAttrs(slog.String("request_id", rid))
	}
	// With tracing on, the trace too: a line found in the logs leads to its trace and back.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
