package authz

import (
	"context"
	"log/slog"
)

// decision is the outcome an audit line records; FAILURE means no decision could be made (and the
// door refused).
type decision string

const (
	decisionAllow   decision = "ALLOW"
	decisionDeny    decision = "DENY"
	decisionFailure decision = "FAILURE"
)

// record writes the audit line of one decision.
func (f *OpenFGA) record(ctx context.Context, d decision, principal Principal, action Action, relation string, object Object, err error) {
	attrs := []slog.Attr{
		slog.String("decision", string(d)),
		slog.String("principal", principal.String()),
		slog.String("action", string(action)),
		slog.String("relation", relation),
		slog.String("object", object.String()),
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	f.audit.LogAttrs(ctx, level, "authorization decision", attrs...)
}
