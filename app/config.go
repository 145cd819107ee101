package app

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// Config is every setting of `lancecat serve`. Each has a flag, a LANCECAT_* environment
// variable and a key of the --config file; a flag given on the command line beats the
// environment, which beats the file.
type Config struct {
	// ConfigFile is a YAML file of settings under the flags and the environment (config_file.go).
	ConfigFile string
	Listen     string
	// MetricsAddr is the operations listener: /metrics and /debug/pprof/, never on Listen.
	// Empty (the default): off.
	MetricsAddr     string
	Root            string
	ControlRoot     string
	S3Endpoint      string
	S3Region        string
	S3AccessKey     string
	S3SecretKey     string
	S3PathStyle     bool
	S3AllowHTTP     bool
	Delimiter       string
	MaxBodyBytes    int64
	LogLevel        string
	ShutdownTimeout time.Duration
	Transport       TransportConfig   // body bounds, timeouts, trusted proxies (below)
	TLS             TLSConfig         // HTTPS, certificate reload, client certificates (config_tls.go)
	Governance      GovernanceConfig  // identity, authorization, warehouses, events (config_governance.go)
	Maintenance     MaintenanceConfig // the table maintenance sweep (config_maintenance.go)
	IndexBuild      IndexBuildConfig  // background index builds (config_indices.go)

	// VendStaticCredentials hands the server's own S3 access key and secret to every caller who
	// may describe, declare or create a table (in storage_options). Off by default: clients bring
	// their own credentials and the server answers only non-secret connection hints.
	VendStaticCredentials bool

	// Console serves the web console at /console (console/): on by default; it holds no rights of
	// its own, every page calls the doors with the signed-in caller's credential.
	Console bool
	// ConsoleSecureCookies marks the console's cookies Secure whatever the request arrived as (a
	// console served over HTTPS by a proxy that terminates TLS). Without it they are Secure on a
	// TLS connection, or when a --trusted-proxies peer sends X-Forwarded-Proto: https.
	ConsoleSecureCookies bool
	// ConsoleOIDC offers OIDC sign-in in the console (config_console.go).
	ConsoleOIDC ConsoleOIDCConfig

	// Vend is credential vending: short-lived, table-scoped STS credentials (config_vend.go).
	Vend VendConfig

	// Telemetry is no setting: RunAddrs makes it from the OTEL_* environment (telemetry.go)
	// unless the caller made its own (NewTelemetry).
	Telemetry *Telemetry
}

// DefaultConfig is the embedded default: a local catalog under ./lancecat-data, on loopback.
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:2333",
		Root:            "./lancecat-data",
		S3Region:        "us-east-1",
		Delimiter:       ident.DefaultDelimiter,
		MaxBodyBytes:    server.DefaultMaxBodyBytes,
		LogLevel:        "info",
		ShutdownTimeout: 30 * time.Second,
		Transport:       defaultTransportConfig(),
		TLS:             TLSConfig{ReloadInterval: DefaultTLSReloadInterval},
		Governance:      defaultGovernanceConfig(),
		Console:         true,
		Vend:            VendConfig{Duration: DefaultVendDuration},
	}
}

// envLookup is os.LookupEnv, replaceable in tests.
type envLookup func(string) (string, bool)

// BindFlags registers every setting on fs with its environment variable as the default.
// Call ApplyEnvErrors after parsing to learn about malformed environment values.
func (c *Config) BindFlags(fs *flag.FlagSet, env envLookup) *EnvErrors {
	if env == nil {
		env = os.LookupEnv
	}
	errs := &EnvErrors{}
	b := binder{fs: fs, env: env, errs: errs}
	b.str(&c.ConfigFile, ConfigFlag, "LANCECAT_CONFIG",
		"YAML file of settings, keyed by flag name (nested keys join with -, lists are comma values); a flag beats the environment, which beats the file")
	b.str(&c.Listen, "listen", "LANCECAT_LISTEN", "address to serve HTTP on (HTTPS with --tls-cert-file)")
	b.str(&c.MetricsAddr, "metrics-addr", "LANCECAT_METRICS_ADDR",
		"address of the operations listener serving Prometheus /metrics and Go's /debug/pprof/ (no authentication: keep it on loopback or a private network); empty: off. The API port serves neither")
	b.str(&c.Root, "root", "LANCECAT_ROOT", "catalog root: a directory, file:///abs/dir or s3://bucket/prefix; it is a Lance directory namespace")
	b.str(&c.ControlRoot, "control-root", "LANCECAT_CONTROL_ROOT", "where governance records live (default: <root>/_lancecat)")
	b.str(&c.S3Endpoint, "s3-endpoint", "LANCECAT_S3_ENDPOINT", "S3-compatible endpoint host[:port] (empty: AWS)")
	b.str(&c.S3Region, "s3-region", "LANCECAT_S3_REGION", "S3 region")
	b.str(&c.S3AccessKey, "s3-access-key", "LANCECAT_S3_ACCESS_KEY", "S3 access key id")
	b.str(&c.S3SecretKey, "s3-secret-key", "LANCECAT_S3_SECRET_KEY", "S3 secret access key")
	b.boolean(&c.S3PathStyle, "s3-path-style", "LANCECAT_S3_PATH_STYLE", "address buckets by path, not virtual host (MinIO)")
	b.boolean(&c.S3AllowHTTP, "s3-allow-http", "LANCECAT_S3_ALLOW_HTTP", "talk to the S3 endpoint over plain HTTP")
	b.boolean(&c.VendStaticCredentials, "vend-static-credentials", "LANCECAT_VEND_STATIC_CREDENTIALS",
		"UNSAFE: hands the server's own S3 access key and secret to every caller who may describe, declare or create a table (storage_options); with them a caller reaches every bucket the server can, control root included. Off: clients bring their own S3 credentials")
	b.boolean(&c.Console, "console", "LANCECAT_CONSOLE", "serve the web console at /console (--console=false: off)")
	b.boolean(&c.ConsoleSecureCookies, "console-secure-cookies", "LANCECAT_CONSOLE_SECURE_COOKIES",
		"mark the console's cookies Secure always (behind a proxy that terminates TLS; otherwise they are Secure over TLS, or when a --trusted-proxies peer sends X-Forwarded-Proto: https)")
	b.str(&c.Delimiter, "delimiter", "LANCECAT_DELIMITER", "joins id parts in request paths")
	b.int64(&c.MaxBodyBytes, "max-body-bytes", "LANCECAT_MAX_BODY_BYTES", "largest request body accepted; larger ones get 413")
	b.str(&c.LogLevel, "log-level", "LANCECAT_LOG_LEVEL", "debug, info, warn or error")
	b.duration(&c.ShutdownTimeout, "shutdown-timeout", "LANCECAT_SHUTDOWN_TIMEOUT", "how long in-flight requests may finish after SIGTERM")
	c.Transport.bindFlags(b)
	c.TLS.bindFlags(b)
	c.Governance.bindFlags(b)
	c.Maintenance.bindFlags(b)
	c.Vend.bindFlags(b)
	c.IndexBuild.bindFlags(b)
	c.ConsoleOIDC.bindFlags(b)
	return errs
}

// EnvErrors collects environment variables that did not parse.
type EnvErrors struct{ msgs []string }

func (e *EnvErrors) add(name, value string, err error) {
	e.msgs = append(e.msgs, fmt.Sprintf("%s=%q: %v", name, value, err))
}

// Err is nil when every environment variable parsed.
func (e *EnvErrors) Err() error {
	if len(e.msgs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid environment: %s", strings.Join(e.msgs, "; "))
}

// Validate checks settings that cannot be right.
func (c Config) Validate() error {
	switch {
	case c.Listen == "":
		return fmt.Errorf("--listen must not be empty")
	case c.Root == "":
		return fmt.Errorf("--root must not be empty")
	case c.MetricsAddr != "" && c.MetricsAddr == c.Listen && !strings.HasSuffix(c.Listen, ":0"):
		return fmt.Errorf("--metrics-addr must differ from --listen: the operations listener is its own port")
	case c.Delimiter == "":
		return fmt.Errorf("--delimiter must not be empty")
	case strings.ContainsAny(c.Delimiter, "/\x00"):
		return fmt.Errorf("--delimiter must not contain / or NUL")
	case c.MaxBodyBytes <= 0:
		return fmt.Errorf("--max-body-bytes must be positive")
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("--shutdown-timeout must not be negative")
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: want host:port (127.0.0.1:9464): %w", c.MetricsAddr, err)
		}
	}
	for _, r := range []struct{ flag, setting string }{
		{"--root", c.Root}, {"--control-root", c.ControlRoot}, {"--warehouse-root", c.Governance.WarehouseRoot},
	} {
		if r.setting == "" {
			continue
		}
		if _, err := storage.ResolveRoot(r.setting); err != nil {
			return fmt.Errorf("%s: %w", r.flag, err)
		}
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if err := c.Transport.validate(c.MaxBodyBytes); err != nil {
		return err
	}
	if err := c.TLS.validate(c.MetricsAddr); err != nil {
		return err
	}
	if err := c.Maintenance.validate(); err != nil {
		return err
	}
	if err := c.validateVend(); err != nil {
		return err
	}
	if err := c.ConsoleOIDC.validate(c); err != nil {
		return err
	}
	return c.Governance.validate()
}

// TransportConfig bounds what one connection may cost: request bodies are read in full before a
// handler (or a write slot) sees them, so their size, their arrival time and the memory all of
// them hold at once are bounded here (body.go).
type TransportConfig struct {
	// MaxJSONBodyBytes caps every body that is not an Arrow IPC upload (Arrow uploads: MaxBodyBytes).
	MaxJSONBodyBytes int64
	// MaxBufferedBodyBytes bounds the body bytes all requests in flight hold together; past it a
	// request waits briefly, then gets 429 code 21.
	MaxBufferedBodyBytes int64
	// ReadBodyTimeout and MinBodyRate: a body must arrive within ReadBodyTimeout plus one second
	// per MinBodyRate bytes received, else 408 code 13 and the connection is closed.
	ReadBodyTimeout time.Duration
	MinBodyRate     int64
	// IdleTimeout closes keep-alive connections idle that long.
	IdleTimeout time.Duration
	// TrustedProxies: comma-separated CIDRs (or addresses) whose X-Forwarded-For is believed.
	TrustedProxies string
}

func defaultTransportConfig() TransportConfig {
	return TransportConfig{MaxJSONBodyBytes: server.DefaultMaxJSONBodyBytes, MaxBufferedBodyBytes: server.DefaultMaxBufferedBodyBytes,
		ReadBodyTimeout: server.DefaultReadBodyTimeout, MinBodyRate: server.DefaultMinBodyRate, IdleTimeout: server.DefaultIdleTimeout}
}

func (t *TransportConfig) bindFlags(b binder) {
	b.int64(&t.MaxJSONBodyBytes, "max-json-body-bytes", "LANCECAT_MAX_JSON_BODY_BYTES",
		"largest body accepted by an operation that does not take Arrow IPC (JSON); larger ones get 413")
	b.int64(&t.MaxBufferedBodyBytes, "max-buffered-body-bytes", "LANCECAT_MAX_BUFFERED_BODY_BYTES",
		"request body bytes all requests in flight may hold in memory together, with what decoding their Arrow IPC bodies allocates; past it a request gets 429 (413 if one request alone needs more)")
	b.duration(&t.ReadBodyTimeout, "read-body-timeout", "LANCECAT_READ_BODY_TIMEOUT",
		"time a request body has to arrive, extended by 1s per --min-body-rate bytes received; past it 408")
	b.int64(&t.MinBodyRate, "min-body-rate", "LANCECAT_MIN_BODY_RATE",
		"bytes per second of upload that extend a body's read deadline (large Arrow uploads)")
	b.duration(&t.IdleTimeout, "idle-timeout", "LANCECAT_IDLE_TIMEOUT", "close keep-alive connections idle this long")
	b.str(&t.TrustedProxies, "trusted-proxies", "LANCECAT_TRUSTED_PROXIES",
		"comma-separated CIDRs of proxies whose X-Forwarded-For names the client; empty: the headers are ignored")
}

// trustedProxies parses TrustedProxies; a bare address is a one-address range.
func (t TransportConfig) trustedProxies() ([]*net.IPNet, error) {
	var out []*net.IPNet
	for s := range strings.SplitSeq(t.TrustedProxies, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			ip := net.ParseIP(s)
			if ip == nil {
				return nil, fmt.Errorf("--trusted-proxies: %q is neither a CIDR nor an IP address", s)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

func (t TransportConfig) validate(maxBody int64) error {
	switch {
	case t.MaxJSONBodyBytes <= 0:
		return fmt.Errorf("--max-json-body-bytes must be positive")
	case t.MaxBufferedBodyBytes < maxBody || t.MaxBufferedBodyBytes < t.MaxJSONBodyBytes:
		return fmt.Errorf("--max-buffered-body-bytes must be at least --max-body-bytes and --max-json-body-bytes (one body must fit)")
	case t.ReadBodyTimeout <= 0:
		return fmt.Errorf("--read-body-timeout must be positive")
	case t.MinBodyRate <= 0:
		return fmt.Errorf("--min-body-rate must be positive")
	case t.IdleTimeout <= 0:
		return fmt.Errorf("--idle-timeout must be positive")
	}
	_, err := t.trustedProxies()
	return err
}
