package app

// The servers this package's tests stand up. Two families:
//
//   - specEnv: a server assembled from a Config as Run assembles it (roots, the routed catalog,
//     governance, credential vending), for tests of what a configured server does;
//   - controlEnv / governedEnv: the control plane's governance service over a memory control
//     root, wired by hand, with or without a directory namespace behind the spec doors
//     (governedEnv's options say which lifecycle rules guard them), for tests of the doors.
//
// And the authorizers they use: the real OpenFGA, in a store of each test's own.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/control"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// serveHTTP serves opts on a test HTTP server until the test ends and answers its URL.
func serveHTTP(tb testing.TB, opts server.Options) string {
	tb.Helper()
	s, err := server.New(opts)
	assert.NilError(tb, err)
	srv := httptest.NewServer(s.Handler())
	tb.Cleanup(srv.Close)
	return srv.URL
}

// withAPIKey sets x-api-key on every request (none when key is empty).
func withAPIKey(key string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		if key != "" {
			r.Header.Set("x-api-key", key)
		}
		return nil
	}
}

// storeName is prefix with a random suffix, which keeps the OpenFGA stores of tests and runs apart.
func storeName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// newTestFGA is an authorizer over a fresh store of the test OpenFGA, with alice an estate admin.
// Decisions are audited as in production (JSON lines), into the void.
func newTestFGA(tb testing.TB) *authz.OpenFGA { return newAuditedTestFGA(tb, io.Discard) }

// newAuditedTestFGA is newTestFGA auditing into audit.
func newAuditedTestFGA(tb testing.TB, audit io.Writer) *authz.OpenFGA {
	tb.Helper()
	url := testenv.OpenFGA(tb)
	ctx := context.Background()
	opts := []authz.Option{authz.WithAuditLog(slog.New(slog.NewJSONHandler(audit, nil)))}
	st, err := authz.EnsureStore(ctx, url, storeName("lancecat-test"), opts...)
	assert.NilError(tb, err)
	fga, err := authz.New(url, st, opts...)
	assert.NilError(tb, err)
	assert.NilError(tb, fga.Ready(ctx))
	assert.NilError(tb, authz.GrantEstateAdmin(ctx, fga, authz.User("alice")))
	return fga
}

// specConfig is the default config over a fresh local root.
func specConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "catalog")
	return cfg
}

// openFGAConfig is specConfig authorized by the real OpenFGA (useOpenFGA).
func openFGAConfig(t *testing.T, store string) Config {
	cfg := specConfig(t)
	useOpenFGA(t, &cfg, store)
	return cfg
}

// fgaSpecConfig is openFGAConfig with room for a slow OpenFGA (a loaded machine).
func fgaSpecConfig(t *testing.T) Config {
	cfg := openFGAConfig(t, "lancecat-test")
	cfg.Governance.OpenFGATimeout = 20e9
	return cfg
}

// useOpenFGA makes cfg authorize with the real OpenFGA, in a store of its own (storeName), with
// alice as estate admin.
func useOpenFGA(t *testing.T, cfg *Config, store string) {
	cfg.Governance.Authz = AuthzOpenFGA
	cfg.Governance.OpenFGAURL = testenv.OpenFGA(t)
	cfg.Governance.OpenFGAStore = storeName(store)
	cfg.Governance.EstateAdmins = "user:alice"
}

// useS3 makes cfg's catalog root root (s3://bucket/prefix) on the test MinIO s3.
func useS3(cfg *Config, s3 storage.S3Config, root string) {
	cfg.Root = root
	cfg.S3Endpoint, cfg.S3Region, cfg.S3AccessKey, cfg.S3SecretKey = s3.Endpoint, s3.Region, s3.AccessKey, s3.SecretKey
	cfg.S3PathStyle, cfg.S3AllowHTTP = true, true
}

// specEnv is a server assembled as Run assembles it (roots, catalog, governance and credential
// vending from cfg), with clients of the spec API acting as principals through API keys.
type specEnv struct {
	url  string
	gov  *governanceParts
	keys *authz.APIKeys
}

func newSpecEnv(t *testing.T, cfg Config) *specEnv {
	t.Helper()
	ctx := context.Background()
	assert.NilError(t, cfg.Validate())
	roots, err := openRoots(ctx, cfg)
	assert.NilError(t, err)
	catalog, err := newCatalog(cfg, roots)
	assert.NilError(t, err)
	logger := slog.New(slog.DiscardHandler)
	gov, err := setupGovernance(ctx, cfg, roots, catalog, logger)
	assert.NilError(t, err)
	// Write the queued control events before the test's directories go (cleanups run last-in
	// first-out: the HTTP server stops first, then this).
	t.Cleanup(gov.close)
	vendor, err := newCredentialVendor(cfg, gov.authorizer, roots.rootURI)
	assert.NilError(t, err)
	url := serveHTTP(t, server.Options{
		Handlers: specHandlers(handlers.Options{Delimiter: cfg.Delimiter, Catalog: catalog, Authorizer: gov.authorizer, Vendor: vendor}, gov.trash),
		Control:  gov.control(control.Options{Delimiter: cfg.Delimiter, Vendor: vendor}, catalog),
		Logger:   logger,
		Authn:    gov.authn,
	})
	return &specEnv{url: url, gov: gov, keys: authz.NewAPIKeys(registry.NewStore(roots.control))}
}

// as is a spec client acting as p (a fresh API key; no key at all with authorization off).
func (e *specEnv) as(t *testing.T, p authz.Principal) *nsclient.ClientWithResponses {
	t.Helper()
	c, err := nsclient.NewClientWithResponses(e.url, nsclient.WithRequestEditorFn(e.keyFor(t, p)))
	assert.NilError(t, err)
	return c
}

// keyFor sets a fresh API key of p on every request (none with authorization off).
func (e *specEnv) keyFor(t *testing.T, p authz.Principal) func(context.Context, *http.Request) error {
	t.Helper()
	key := ""
	if e.gov.authn.Enabled {
		var err error
		key, _, err = e.keys.Create(context.Background(), p, "test")
		assert.NilError(t, err)
	}
	return withAPIKey(key)
}

// controlEnv is a server with the control plane backed: a memory control root, warehouses in
// directories under a temporary base, and the given authorizer (Disabled: authorization off).
type controlEnv struct {
	url    string
	root   string // the catalog root directory (reserved)
	base   string // where warehouses go by default
	keys   *authz.APIKeys
	authz  authz.Authorizer
	logs   *syncBuffer
	anyone *controlclient.ClientWithResponses // presents no identity
}

// newControlEnv is the control plane alone: no catalog behind the spec doors, so the protection
// and policy doors do not ask whether their object exists.
func newControlEnv(t *testing.T, a authz.Authorizer) *controlEnv {
	t.Helper()
	return newGovernedEnv(t, withAuthorizer(a), withoutCatalog()).controlEnv
}

// client calls as the holder of apiKey ("" = no identity), always with the same request id, so
// two answers can be compared byte for byte.
func (e *controlEnv) client(t *testing.T, apiKey string) *controlclient.ClientWithResponses {
	t.Helper()
	setKey := withAPIKey(apiKey)
	c, err := controlclient.NewClientWithResponses(e.url, controlclient.WithRequestEditorFn(func(ctx context.Context, r *http.Request) error {
		r.Header.Set("X-Request-Id", "fixed-request-id")
		return setKey(ctx, r)
	}))
	assert.NilError(t, err)
	return c
}

// as returns a client acting as principal (through a fresh API key).
func (e *controlEnv) as(t *testing.T, p authz.Principal) *controlclient.ClientWithResponses {
	t.Helper()
	key, _, err := e.keys.Create(context.Background(), p, "test")
	assert.NilError(t, err)
	return e.client(t, key)
}

// governedEnv is a server whose protection and policy doors ask a real directory namespace (on a
// temporary directory) whether their objects exist; spec is a client of its spec doors with no
// identity.
type governedEnv struct {
	*controlEnv
	gov     *governance.Service
	catalog *namespace.Namespace
	store   *registry.Store
	control *storage.Memory
	maint   *maintenance.Service // withMaintenance
	spec    *nsclient.ClientWithResponses
}

// governedSetup is what newGovernedEnv's options choose.
type governedSetup struct {
	authorizer  authz.Authorizer
	noCatalog   bool
	lifecycle   bool
	trash       bool
	grace       time.Duration
	maintenance bool
}

type governedOption func(*governedSetup)

// withAuthorizer authorizes with a (default: authorization off).
func withAuthorizer(a authz.Authorizer) governedOption {
	return func(s *governedSetup) { s.authorizer = a }
}

// withoutCatalog serves no catalog: the spec doors have nothing behind them and governance no
// objects to ask about (newControlEnv).
func withoutCatalog() governedOption { return func(s *governedSetup) { s.noCatalog = true } }

// withLifecycle guards the spec doors by the governance service (protection, records, events)
// as Run wires them.
func withLifecycle() governedOption { return func(s *governedSetup) { s.lifecycle = true } }

// withTrash is withLifecycle with recoverable drops of grace (0: a drop destroys), on the spec
// doors and the control plane's undrop doors.
func withTrash(grace time.Duration) governedOption {
	return func(s *governedSetup) { s.lifecycle, s.trash, s.grace = true, true, grace }
}

// withMaintenance serves the maintenance doors (and their metrics) over the catalog.
func withMaintenance() governedOption { return func(s *governedSetup) { s.maintenance = true } }

func newGovernedEnv(t *testing.T, opts ...governedOption) *governedEnv {
	t.Helper()
	set := governedSetup{authorizer: authz.Disabled{}}
	for _, o := range opts {
		o(&set)
	}
	a := set.authorizer
	dir := t.TempDir()
	e := &governedEnv{controlEnv: &controlEnv{root: filepath.Join(dir, "catalog"), base: filepath.Join(dir, "warehouses"), authz: a, logs: &syncBuffer{}}}
	e.control = storage.NewMemory()
	e.store = registry.NewStore(e.control)
	e.keys = authz.NewAPIKeys(e.store)
	reserve := []string{e.root}
	hopts := handlers.Options{}
	gopts := governance.Options{Store: e.store, Authorizer: a, Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
	if set.noCatalog {
		reserve = append(reserve, filepath.Join(e.root, "_lancecat"))
	} else {
		fs, err := storage.NewFS(e.root)
		assert.NilError(t, err)
		e.catalog = namespace.New(fs, namespace.Options{RootURI: e.root})
		gopts.Objects, hopts.Catalog = e.catalog, e.catalog
	}
	gopts.Buckets = governance.LocalBuckets{Base: e.base, Reserve: reserve}
	var err error
	e.gov, err = governance.New(gopts)
	assert.NilError(t, err)
	ctl := control.New(control.Options{}).WithGovernance(e.gov, nil)
	sopts := server.Options{
		Handlers: handlers.New(hopts),
		Logger:   slog.New(slog.NewJSONHandler(e.logs, nil)),
		Authn:    &authz.Authenticator{Enabled: a.Enabled(), APIKeys: e.keys},
	}
	switch {
	case set.trash:
		trash := governance.NewTrash(e.gov, set.grace, e.catalog)
		sopts.Handlers = specHandlers(hopts, trash)
		ctl = ctl.WithTrash(trash)
	case set.lifecycle:
		sopts.Handlers = specHandlers(hopts, e.gov)
	}
	if set.maintenance {
		e.maint = &maintenance.Service{Catalog: e.catalog, Governance: e.gov, Events: e.gov.Events(), Metrics: maintenance.NewMetrics()}
		ctl = ctl.WithMaintenance(e.maint)
		sopts.Collectors = e.maint.Metrics.Collectors()
	}
	sopts.Control = ctl
	e.url = serveHTTP(t, sopts)
	e.anyone = e.client(t, "")
	e.spec, err = nsclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	return e
}

// newLifecycleEnv is newGovernedEnv with the spec doors guarded by the governance service, as
// Run wires them.
func newLifecycleEnv(t *testing.T) (*governedEnv, *nsclient.ClientWithResponses) {
	e := newGovernedEnv(t, withLifecycle())
	return e, e.spec
}

// newTrashEnv is newLifecycleEnv with recoverable drops of grace, wired as Run wires them.
func newTrashEnv(t *testing.T, grace time.Duration) (*governedEnv, *nsclient.ClientWithResponses) {
	e := newGovernedEnv(t, withTrash(grace))
	return e, e.spec
}
