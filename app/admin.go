package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/routing"
)

// OpenTrash builds the governance service with recoverable drops over the catalog cfg names, as
// Run wires it but without serving: for operator commands such as `lancecat trash`. It acts as
// the operator, so authorization is off whatever cfg says (no door is checked); AttachRevoker
// connects a purge to OpenFGA to revoke purged objects' tuples. The router behind it routes,
// quarantines and opens warehouse roots as a replica does.
func OpenTrash(ctx context.Context, cfg Config, logger *slog.Logger) (*governance.Trash, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	_, _, gov, err := openForCommand(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	return gov.trash, nil
}

// openForCommand opens the roots, the router and governance cfg names, as Run does but for an
// operator command: it acts as the operator, so authorization is off whatever cfg says, and its
// events are written before it exits.
func openForCommand(ctx context.Context, cfg Config, logger *slog.Logger) (*catalogRoots, *routing.Router, *governanceParts, error) {
	cfg.Governance.Authz = AuthzOff
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, err
	}
	roots, err := openRoots(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	catalog, err := newCatalog(cfg, roots)
	if err != nil {
		return nil, nil, nil, err
	}
	gov, err := setupGovernance(ctx, cfg, roots, catalog, logger)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("governance: %w", err)
	}
	gov.synchronous()
	return roots, catalog, gov, nil
}

// revokerTimeout bounds how long an admin command waits for OpenFGA before it queues instead.
const revokerTimeout = 20 * time.Second

// AttachRevoker gives an admin command's trash (OpenTrash) the means to revoke purged objects'
// tuples: the OpenFGA cfg names (--authz openfga). When authorization is off in cfg, or OpenFGA
// cannot be reached, the purge queues the revocations on the control root instead, for the next
// purge run that reaches it (a server's background loop, or this command run with OpenFGA); the
// answer then says why, for the command to tell the operator.
func AttachRevoker(ctx context.Context, cfg Config, trash *governance.Trash) (queued string) {
	g := cfg.Governance
	if g.Authz != AuthzOpenFGA {
		reason := "authorization is off in this command's settings (no --authz " + AuthzOpenFGA + "): purged objects' grants are queued for a purge that reaches OpenFGA"
		trash.QueueRevocations(reason)
		return reason
	}
	ctx, cancel := context.WithTimeout(ctx, revokerTimeout)
	defer cancel()
	fga, err := openFGA(ctx, g, slog.New(slog.DiscardHandler), true)
	if err == nil {
		err = fga.Ready(ctx)
	}
	if err != nil {
		reason := fmt.Sprintf("OpenFGA at %s is unreachable or has no such store (%v): purged objects' grants are queued for a purge that reaches it", g.OpenFGAURL, err)
		trash.QueueRevocations(reason)
		return reason
	}
	trash.RevokeWith(fga)
	return ""
}
