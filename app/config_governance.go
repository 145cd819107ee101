package app

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/server"
)

// Authorization modes.
const (
	AuthzOff     = "off"
	AuthzOpenFGA = "openfga"
)

// GovernanceConfig is the identity, authorization and control-plane part of the settings.
type GovernanceConfig struct {
	Authz        string // off (every caller is an anonymous estate admin) or openfga
	OpenFGAURL   string
	OpenFGAStore string // store name; created (with our model) when missing
	OpenFGAToken string // preshared key, if the OpenFGA server wants one
	// OpenFGATimeout bounds each OpenFGA request; past it the door answers 503 (never an allow).
	OpenFGATimeout time.Duration
	// OpenFGAAllowCacheTTL keeps allows OpenFGA answered for this long on this replica (0: off, the
	// default). A revoke made on another replica takes up to this long to bite here; denials and
	// failures are never cached. At most maxAllowCacheTTL (the API-key cache's 30 s).
	OpenFGAAllowCacheTTL time.Duration
	OIDCIssuer           string
	OIDCAudience         string
	OIDCJWKSURL          string // skips discovery when set
	EstateAdmins         string // comma-separated principals granted estate admin at startup (user:alice,…)
	WarehouseRoot        string // local catalogs: where warehouses without an explicit directory go
	EventBuffer          int
	// ReadOnly is maintenance mode: every write is 503 code 17 with Retry-After; reads are served.
	ReadOnly bool
	// MaxConcurrentWrites sheds writes beyond it with 429 code 21 (0: no limit).
	MaxConcurrentWrites int
	// TrashGraceDays makes table drops recoverable for that many days (0: a drop destroys).
	TrashGraceDays int
	// RequireWarehouseNamespaces refuses top-level namespace creates through the spec door: every
	// top-level namespace is made in a warehouse (POST /v1/warehouses/{id}/namespaces).
	RequireWarehouseNamespaces bool
	// TrashPurgeInterval runs the trash expiry purge on this replica that often (0: never; the
	// operator runs `lancecat trash purge`).
	TrashPurgeInterval time.Duration
	// Webhooks deliver the control events to HTTP endpoints (config_webhooks.go).
	Webhooks WebhookConfig
}

// maxAllowCacheTTL bounds --openfga-allow-cache-ttl by the API-key cache's 30 s: a revoke never
// takes longer to bite through the allow cache than a key revoke does.
const maxAllowCacheTTL = 30 * time.Second

// maxTrashGraceDays is the longest grace a time.Duration holds: past it days*24h wraps
// (200000 days is a negative grace, and every drop would be purgeable at once).
const maxTrashGraceDays = int(math.MaxInt64 / (24 * time.Hour))

func defaultGovernanceConfig() GovernanceConfig {
	return GovernanceConfig{Authz: AuthzOff, OpenFGAStore: "lancecat", OpenFGATimeout: 2 * time.Second,
		EventBuffer: 512, MaxConcurrentWrites: server.DefaultMaxConcurrentWrites}
}

func (g *GovernanceConfig) bindFlags(b binder) {
	b.str(&g.Authz, "authz", "LANCECAT_AUTHZ", "authorization: off (every caller is an anonymous estate admin) or openfga")
	b.str(&g.OpenFGAURL, "openfga-url", "LANCECAT_OPENFGA_URL", "OpenFGA HTTP API, http(s)://host:port (with --authz openfga)")
	b.str(&g.OpenFGAStore, "openfga-store", "LANCECAT_OPENFGA_STORE", "OpenFGA store name; created with lancecat's model when missing")
	b.str(&g.OpenFGAToken, "openfga-token", "LANCECAT_OPENFGA_TOKEN", "OpenFGA preshared API token, if it wants one")
	b.duration(&g.OpenFGATimeout, "openfga-timeout", "LANCECAT_OPENFGA_TIMEOUT", "bound on each OpenFGA request; past it the request is 503, never an allow")
	b.duration(&g.OpenFGAAllowCacheTTL, "openfga-allow-cache-ttl", "LANCECAT_OPENFGA_ALLOW_CACHE_TTL", "reuse an allow on this replica this long (0: off; at most 30s); a revoke elsewhere takes up to this long to bite here")
	b.str(&g.OIDCIssuer, "oidc-issuer", "LANCECAT_OIDC_ISSUER", "accept bearer tokens from this OpenID Connect issuer")
	b.str(&g.OIDCAudience, "oidc-audience", "LANCECAT_OIDC_AUDIENCE", "the audience bearer tokens must carry")
	b.str(&g.OIDCJWKSURL, "oidc-jwks-url", "LANCECAT_OIDC_JWKS_URL", "read the issuer's signing keys here instead of discovering them")
	b.str(&g.EstateAdmins, "estate-admins", "LANCECAT_ESTATE_ADMINS", "comma-separated principals (user:<id>) made estate admins at startup")
	b.str(&g.WarehouseRoot, "warehouse-root", "LANCECAT_WAREHOUSE_ROOT", "local catalogs: directory for warehouses created without a bucket (default: <root>-warehouses)")
	b.integer(&g.EventBuffer, "event-buffer", "LANCECAT_EVENT_BUFFER", "control events each replica retains for GET /v1/events")
	b.boolean(&g.ReadOnly, "read-only", "LANCECAT_READ_ONLY", "maintenance mode: refuse every write with 503 and Retry-After, serve reads")
	b.integer(&g.MaxConcurrentWrites, "max-concurrent-writes", "LANCECAT_MAX_CONCURRENT_WRITES", "writes served at once; more are refused with 429, never queued; 0: no limit")
	b.integer(&g.TrashGraceDays, "trash-grace-days", "LANCECAT_TRASH_GRACE_DAYS", "days a dropped table stays recoverable with POST /v1/table/{id}/undrop; 0: a drop destroys")
	b.boolean(&g.RequireWarehouseNamespaces, "require-warehouse-namespaces", "LANCECAT_REQUIRE_WAREHOUSE_NAMESPACES",
		"top-level namespaces are made only in warehouses (POST /v1/warehouses/{id}/namespaces); the spec's create refuses them")
	b.duration(&g.TrashPurgeInterval, "trash-purge-interval", "LANCECAT_TRASH_PURGE_INTERVAL",
		"run the expiry purge of recoverable drops this often on this replica (safe on every replica at once); 0: only `lancecat trash purge` purges")
	g.Webhooks.bindFlags(b)
}

// estateAdmins parses EstateAdmins.
func (g GovernanceConfig) estateAdmins() ([]authz.Principal, error) {
	var out []authz.Principal
	for _, s := range strings.Split(g.EstateAdmins, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		p, err := authz.ParsePrincipal(s)
		if err != nil {
			return nil, fmt.Errorf("--estate-admins: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (g GovernanceConfig) validate() error {
	switch g.Authz {
	case AuthzOff:
	case AuthzOpenFGA:
		if g.OpenFGAURL == "" {
			return fmt.Errorf("--authz openfga needs --openfga-url")
		}
	default:
		return fmt.Errorf("--authz %q: want %s or %s", g.Authz, AuthzOff, AuthzOpenFGA)
	}
	if g.OpenFGAAllowCacheTTL < 0 || g.OpenFGAAllowCacheTTL > maxAllowCacheTTL {
		return fmt.Errorf("--openfga-allow-cache-ttl must be between 0 (off) and %s, got %s", maxAllowCacheTTL, g.OpenFGAAllowCacheTTL)
	}
	if (g.OIDCIssuer == "") != (g.OIDCAudience == "") {
		return fmt.Errorf("--oidc-issuer and --oidc-audience go together")
	}
	if g.EventBuffer < 1 {
		return fmt.Errorf("--event-buffer must be positive")
	}
	if g.TrashGraceDays < 0 {
		return fmt.Errorf("--trash-grace-days must not be negative (0: a drop destroys)")
	}
	if g.TrashGraceDays > maxTrashGraceDays {
		return fmt.Errorf("--trash-grace-days must be at most %d (about 292 years), got %d", maxTrashGraceDays, g.TrashGraceDays)
	}
	if g.TrashPurgeInterval < 0 {
		return fmt.Errorf("--trash-purge-interval must not be negative (0: off)")
	}
	if g.MaxConcurrentWrites < 0 {
		return fmt.Errorf("--max-concurrent-writes must not be negative (0: no limit)")
	}
	if hooks, err := g.Webhooks.hooks(); err != nil {
		return err
	} else if _, err := governance.NewWebhooks(nil, nil, hooks, governance.WebhookOptions{}); err != nil {
		return fmt.Errorf("--webhook-urls: %w", err)
	}
	_, err := g.estateAdmins()
	return err
}
