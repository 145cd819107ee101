package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lancecat/lancecat/governance"
)

// OpenTrash builds the governance service with recoverable drops over the catalog cfg names, as
// Run wires it but without serving: for operator commands such as `lancecat trash`. It acts as
// the operator, so authorization is off whatever cfg says (OpenFGA is not contacted); the
// router behind it routes, quarantines and opens warehouse roots as a replica does.
func OpenTrash(ctx context.Context, cfg Config, logger *slog.Logger) (*governance.Trash, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Governance.Authz = AuthzOff
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	roots, err := openRoots(ctx, cfg)
	if err != nil {
		return nil, err
	}
	catalog, err := newCatalog(cfg, roots)
	if err != nil {
		return nil, err
	}
	gov, err := setupGovernance(ctx, cfg, roots, catalog, logger)
	if err != nil {
		return nil, fmt.Errorf("governance: %w", err)
	}
	return gov.trash, nil
}
