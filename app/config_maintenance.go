package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/routing"
)

// MaintenanceConfig is the table maintenance sweep (maintenance.Service).
type MaintenanceConfig struct {
	// Interval runs the sweep on this replica that often (0: off; every replica may run it: a
	// table's lease keeps two from working it at once).
	Interval time.Duration
}

func (m *MaintenanceConfig) bindFlags(b binder) {
	b.duration(&m.Interval, "maintenance-interval", "LANCECAT_MAINTENANCE_INTERVAL",
		"sweep every table (compact, cleanup by its policy) this often on this replica (safe on every replica at once: per-table leases); 0: off, only POST /v1/table/{id}/maintenance/run and `lancecat maintenance run`")
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
func newMaintenance(cfg Config, roots *catalogRoots, catalog *routing.Router, gov *governanceParts, logger *slog.Logger) *maintenance.Service {
	svc := &maintenance.Service{
		Catalog:  catalog,
		Metrics:  maintenance.NewMetrics(),
		Logger:   logger,
		ReadOnly: cfg.Governance.ReadOnly,
	}
	// The orphan scan's drift categories: every root (the catalog root, then each bound
	// warehouse root), the control root's records, the trash.
	records := registry.NewStore(roots.control)
	drift := &maintenance.Drift{
		Records: records,
		Roots: func(ctx context.Context) ([]maintenance.DriftRoot, error) {
			out := []maintenance.DriftRoot{{URI: roots.rootURI, Namespace: catalog.Default()}}
			binds, err := catalog.Bindings(ctx)
			if err != nil {
				return nil, err
			}
			seen := map[string]bool{roots.rootURI: true}
			for _, b := range binds {
				if seen[b.RootURI] {
					continue
				}
				// A quarantined (or gone) warehouse's root is not scanned: nothing there is touched.
				wh, _, err := registry.Read[registry.Warehouse](ctx, records, registry.WarehouseKey(b.WarehouseID))
				if err != nil || !wh.Active() {
					continue
				}
				seen[b.RootURI] = true
				n, err := catalog.Root(ctx, b.RootURI)
				if err != nil {
					return nil, err
				}
				out = append(out, maintenance.DriftRoot{URI: b.RootURI, Namespace: n})
			}
			return out, nil
		},
	}
	if gov != nil && gov.service != nil {
		svc.Governance = gov.service
		drift.Clear = gov.service
		if ev := gov.service.Events(); ev != nil {
			svc.Events = ev
		}
	}
	if gov != nil && gov.trash != nil {
		drift.Trash = gov.trash.TrashRecords
	}
	if gov != nil {
		// Tuples of gone objects (authorization on: OpenFGA lists its store; off: not checked).
		if ts, ok := gov.authorizer.(maintenance.TupleSource); ok {
			drift.Tuples = ts
		}
	}
	svc.Drift = drift
	return svc
}

// OpenMaintenance opens the roots and governance cfg names and returns the maintenance service
// over them, for `lancecat maintenance` (no server needed: the table leases keep it from working
// a table a serving replica's sweep is working).
func OpenMaintenance(ctx context.Context, cfg Config, logger *slog.Logger) (*maintenance.Service, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Authorization is off for the command (it is nobody's request), but with --authz openfga
	// the drift scan reads the store's tuples: the store must exist already (a command creates
	// nothing there, grants no estate admin).
	var fga *authz.OpenFGA
	if cfg.Governance.Authz == AuthzOpenFGA {
		var err error
		if fga, err = openFGA(ctx, cfg.Governance, logger, true); err != nil {
			return nil, fmt.Errorf("authorization: %w", err)
		}
	}
	roots, catalog, gov, err := openForCommand(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	svc := newMaintenance(cfg, roots, catalog, gov, logger)
	if fga != nil {
		svc.Drift.Tuples = fga
	}
	return svc, nil
}
