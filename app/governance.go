package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/governed"
	"github.com/lancecat/lancecat/control"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/mview"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/routing"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// governanceParts is what the control plane adds to a server: who callers are, what they may do,
// and the lifecycle service behind the control routes.
type governanceParts struct {
	authn      *authz.Authenticator
	authorizer authz.Authorizer
	service    *governance.Service
	trash      *governance.Trash // the service with recoverable drops: the spec doors' lifecycle
	ready      []server.ReadyCheck
}

// close writes the control events still queued for the journal.
func (g *governanceParts) close() {
	if j := g.service.Events().Journal(); j != nil {
		j.Close()
	}
}

// synchronous makes the journal write each event before Emit returns: for commands that exit
// when their work is done.
func (g *governanceParts) synchronous() *governanceParts {
	if j := g.service.Events().Journal(); j != nil {
		j.Synchronous()
	}
	return g
}

// control returns the control-plane handlers backed by the service.
// drop (the router) cascades warehouse deletes over bound namespaces and binds new ones.
func (g *governanceParts) control(opts control.Options, drop governance.NamespaceDropper) *control.Control {
	// The catalog and the authorizer tell GET /v1/capabilities what the spec doors back.
	if c, ok := drop.(catalog.Catalog); ok && opts.Catalog == nil {
		opts.Catalog = c
	}
	if opts.Authorizer == nil {
		opts.Authorizer = g.authorizer
	}
	return control.New(opts).WithGovernance(g.service, drop).WithTrash(g.trash)
}

// specHandlers are the spec doors over opts.Catalog with its lifecycle rules (catalog/governed):
// takeovers, renames, batch entries and view sources authorized and tuples kept by
// opts.Authorizer (when enabled); protection, the live trash, records, recoverable drops and
// events kept by records (when not nil). Without either the decorator delegates every call. The
// materialized views and computed columns (package mview) work over the governed catalog, so
// their tables and commits keep the same rules and events.
func specHandlers(opts handlers.Options, records governed.Records) *handlers.Server {
	if opts.Catalog != nil {
		g := governed.New(opts.Catalog, governed.Options{Delimiter: opts.Delimiter, Authorizer: opts.Authorizer, Records: records})
		opts.Catalog, opts.Views = g, g.Views(&mview.Service{Catalog: g})
	}
	return handlers.New(opts)
}

// The governance service keeps the records, the trash and the events the decorator keeps in step.
var (
	_ governed.Records        = (*governance.Service)(nil)
	_ governed.ChangeRecorder = (*governance.Service)(nil)
	_ governed.Records        = (*governance.Trash)(nil)
	_ governed.Recycler       = (*governance.Trash)(nil)
	_ governed.ChangeRecorder = (*governance.Trash)(nil)
)

// setupGovernance builds identity, authorization and the lifecycle service from cfg. With
// --authz openfga it makes sure the OpenFGA store and model exist (EnsureStore) and grants the
// configured estate admins; every authorization decision is then written to the audit log
// (log=audit).
//
// objects is the catalog the protection and policy doors ask whether their object exists.
func setupGovernance(ctx context.Context, cfg Config, roots *catalogRoots, objects governance.Objects, logger *slog.Logger) (*governanceParts, error) {
	g := cfg.Governance
	store := registry.NewStore(roots.control)
	parts := &governanceParts{authorizer: authz.Disabled{}, authn: &authz.Authenticator{}}
	if g.Authz == AuthzOpenFGA {
		fga, err := openFGA(ctx, g, logger, false, cfg.Telemetry.openFGAOptions()...)
		if err != nil {
			return nil, err
		}
		st := fga.Store()
		admins, err := g.estateAdmins()
		if err != nil {
			return nil, err
		}
		for _, p := range admins {
			if err := authz.GrantEstateAdmin(ctx, fga, p); err != nil {
				return nil, fmt.Errorf("granting estate admin to %s: %w", p, err)
			}
		}
		logger.Info("authorization", slog.String("mode", AuthzOpenFGA), slog.String("store", st.ID),
			slog.String("model", st.ModelID), slog.Int("estate_admins", len(admins)))
		// Navigator tuples a store written before they existed lacks (idempotent; in the
		// background: until it is done, those callers are refused the containers above their
		// grants, never shown more).
		go func() {
			rep, err := fga.ReconcileNavigators(context.WithoutCancel(ctx), false)
			if err != nil {
				logger.Warn("authorization: backfilling navigator tuples failed; run `lancecat admin navigators`", slog.String("error", err.Error()))
				return
			}
			logger.Info("authorization: navigator tuples", slog.Int("tuples_read", rep.Tuples), slog.Int("written", rep.Written), slog.Int("stale", rep.Stale))
		}()
		parts.authorizer = fga
		parts.ready = append(parts.ready, server.ReadyCheck{Name: "openfga", Check: fga.Ready})
		parts.authn = &authz.Authenticator{Enabled: true, APIKeys: authz.NewAPIKeys(store)}
		if g.OIDCIssuer != "" {
			v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: g.OIDCIssuer, Audience: g.OIDCAudience, JWKSURL: g.OIDCJWKSURL})
			if err != nil {
				return nil, err
			}
			parts.authn.Tokens = v
		}
	} else {
		logger.Info("authorization", slog.String("mode", AuthzOff))
	}
	buckets, err := warehouseBuckets(cfg, roots)
	if err != nil {
		return nil, err
	}
	svc, err := governance.New(governance.Options{
		Store: store, Authorizer: parts.authorizer, Buckets: buckets,
		Events: governance.NewEvents(g.EventBuffer).WithJournal(governance.NewJournal(roots.control, 0, logger)), Logger: logger,
		Objects: objects, Delimiter: cfg.Delimiter,
	})
	if err != nil {
		return nil, err
	}
	parts.service = svc
	if r, ok := objects.(*routing.Router); ok {
		r.OnUnbind(svc.NamespaceUnbound)
	}
	tables, _ := objects.(governance.TableRegistrar)
	parts.trash = governance.NewTrash(svc, time.Duration(g.TrashGraceDays)*24*time.Hour, tables)
	return parts, nil
}

// openFGA connects to the OpenFGA store g names, making sure it and our model exist (EnsureStore;
// mustExist: OpenStore, for admin commands).
func openFGA(ctx context.Context, g GovernanceConfig, logger *slog.Logger, mustExist bool, extra ...authz.Option) (*authz.OpenFGA, error) {
	opts := append([]authz.Option{authz.WithAuditLog(slog.New(server.LogRequestIDs(logger.Handler())).With(slog.String("log", "audit")))}, extra...)
	if g.OpenFGATimeout > 0 {
		opts = append(opts, authz.WithTimeout(g.OpenFGATimeout))
	}
	if g.OpenFGAToken != "" {
		opts = append(opts, authz.WithAPIToken(g.OpenFGAToken))
	}
	if g.OpenFGAAllowCacheTTL > 0 {
		opts = append(opts, authz.WithAllowCache(g.OpenFGAAllowCacheTTL))
	}
	open := authz.EnsureStore
	if mustExist {
		open = authz.OpenStore
	}
	st, err := open(ctx, g.OpenFGAURL, g.OpenFGAStore, opts...)
	if err != nil {
		return nil, fmt.Errorf("OpenFGA at %s: %w", g.OpenFGAURL, err)
	}
	return authz.New(g.OpenFGAURL, st, opts...)
}

// OpenAuthorizer connects an admin command (`lancecat admin estate`) to the OpenFGA store cfg
// names. Authorization must be on (--authz openfga): with it off there are no grants.
func OpenAuthorizer(ctx context.Context, cfg Config) (*authz.OpenFGA, error) {
	return openAuthorizer(ctx, cfg, true)
}

// EnsureAuthorizer is OpenAuthorizer creating the store (with the model) when it is missing:
// `lancecat admin restore` into a fresh OpenFGA.
func EnsureAuthorizer(ctx context.Context, cfg Config) (*authz.OpenFGA, error) {
	return openAuthorizer(ctx, cfg, false)
}

func openAuthorizer(ctx context.Context, cfg Config, mustExist bool) (*authz.OpenFGA, error) {
	if cfg.Governance.Authz != AuthzOpenFGA {
		return nil, fmt.Errorf("authorization is off: pass --authz %s and the --openfga-* settings the server runs with", AuthzOpenFGA)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fga, err := openFGA(ctx, cfg.Governance, slog.New(slog.DiscardHandler), mustExist)
	if err != nil {
		return nil, err
	}
	return fga, fga.Ready(ctx)
}

// warehouseBuckets is where warehouses live: S3 buckets next to an S3 catalog root, directories
// next to a local one. The catalog root's and control root's buckets (directories) are reserved.
func warehouseBuckets(cfg Config, roots *catalogRoots) (governance.Buckets, error) {
	switch {
	case strings.HasPrefix(roots.rootURI, "s3://"):
		var reserve []string
		for _, u := range []string{roots.rootURI, roots.controlURI} {
			if parsed, err := url.Parse(u); err == nil && parsed.Scheme == "s3" {
				reserve = append(reserve, parsed.Host)
			}
		}
		return governance.S3Buckets{Config: cfg.s3Config(), Reserve: reserve}, nil
	case strings.Contains(roots.rootURI, "://") && !strings.HasPrefix(roots.rootURI, "file://"):
		return nil, nil // memory:// and friends: no warehouses
	}
	local := func(u string) string { return filepath.Clean(strings.TrimPrefix(u, "file://")) }
	base := cfg.Governance.WarehouseRoot
	if base == "" {
		base = local(roots.rootURI) + "-warehouses"
	}
	base, err := resolveURI(base)
	if err != nil {
		return nil, fmt.Errorf("--warehouse-root: %w", err)
	}
	return governance.LocalBuckets{Base: base, Reserve: []string{local(roots.rootURI), local(roots.controlURI)}}, nil
}

// OpenControlRoot opens the control root cfg names (for admin commands such as `lancecat apikey`).
func OpenControlRoot(ctx context.Context, cfg Config) (storage.Bucket, string, error) {
	rootURI, err := resolveURI(cfg.Root)
	if err != nil {
		return nil, "", fmt.Errorf("--root: %w", err)
	}
	ctlURI, err := controlURI(cfg, rootURI)
	if err != nil {
		return nil, "", fmt.Errorf("--control-root: %w", err)
	}
	b, err := storage.Open(ctx, ctlURI, cfg.s3Config())
	if err != nil {
		return nil, "", fmt.Errorf("opening the control root %s: %w", ctlURI, err)
	}
	return b, ctlURI, nil
}
