package server

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/routing"
)

// MaintenanceConfig is the table maintenance sweep (maintenance.Service).
type MaintenanceConfig struct {
	// Interval runs the sweep on this replica that often (0: off; every replica may run it: a
	// table's lease keeps two from working it at once).
	Interval time.Duration
}

func (m *MaintenanceConfig) bindFlags(fs *flag.FlagSet, env envLookup, errs *EnvErrors) {
	if v, ok := env("LANCECAT_MAINTENANCE_INTERVAL"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			errs.add("LANCECAT_MAINTENANCE_INTERVAL", v, err)
		}
		m.Interval = d
	}
	fs.DurationVar(&m.Interval, "maintenance-interval", m.Interval,
		"sweep every table (compact, cleanup by its policy) this often on this replica (safe on every replica at once: per-table leases); 0: off, only POST /v1/table/{id}/maintenance/run and `lancecat maintenance run` (env LANCECAT_MAINTENANCE_INTERVAL)")
}

func (m MaintenanceConfig) validate() error {
	if m.Interval < 0 {
		return fmt.Errorf("--maintenance-interval must not be negative (0: off)")
	}
	return nil
}

// newMaintenance is the maintenance service over the catalog (every root, through the router:
// not the governed decorator, the sweep is nobody's request), with governance's policies,
// protection and events.
func newMaintenance(cfg Config, catalog *routing.Router, gov *governanceParts, logger *slog.Logger) *maintenance.Service {
	svc := &maintenance.Service{
		Catalog:  catalog,
		Metrics:  maintenance.NewMetrics(),
		Logger:   logger,
		ReadOnly: cfg.Governance.ReadOnly,
	}
	if gov != nil && gov.service != nil {
		svc.Governance = gov.service
		if ev := gov.service.Events(); ev != nil {
			svc.Events = ev
		}
	}
	return svc
}

// OpenMaintenance opens the roots and governance cfg names and returns the maintenance service
// over them, for `lancecat maintenance` (no server needed: the table leases keep it from working
// a table a serving replica's sweep is working).
func OpenMaintenance(ctx context.Context, cfg Config, logger *slog.Logger) (*maintenance.Service, error) {
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
	gov.synchronous() // a command's events are written before it exits
	return newMaintenance(cfg, catalog, gov, logger), nil
}
