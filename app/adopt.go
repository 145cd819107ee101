package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/registry"
)

// Adopt runs `lancecat admin adopt`: every project, warehouse, namespace and table the roots of
// cfg hold is brought into the OpenFGA store cfg names (governance.Service.Adopt), with owner as
// the owner of each object nobody owns. apply false: the dry run. The store must exist (a server
// started with --authz openfga made it).
func Adopt(ctx context.Context, cfg Config, owner authz.Subject, apply bool) (governance.AdoptReport, error) {
	fga, err := OpenAuthorizer(ctx, cfg)
	if err != nil {
		return governance.AdoptReport{}, err
	}
	roots, err := openRoots(ctx, cfg)
	if err != nil {
		return governance.AdoptReport{}, err
	}
	catalog, err := newCatalog(cfg, roots)
	if err != nil {
		return governance.AdoptReport{}, err
	}
	buckets, err := warehouseBuckets(cfg, roots)
	if err != nil {
		return governance.AdoptReport{}, err
	}
	svc, err := governance.New(governance.Options{
		Store: registry.NewStore(roots.control), Authorizer: fga, Buckets: buckets,
		Logger: slog.New(slog.DiscardHandler), Objects: catalog, Delimiter: cfg.Delimiter,
	})
	if err != nil {
		return governance.AdoptReport{}, fmt.Errorf("governance: %w", err)
	}
	return svc.Adopt(ctx, catalog, owner, apply)
}
