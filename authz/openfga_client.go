package authz

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	openfga "github.com/openfga/go-sdk"

	nserr "github.com/lancecat/lancecat/errors"
)

// Option tunes the OpenFGA client.
type Option func(*options)

type options struct {
	timeout    time.Duration
	limit      int
	token      string
	httpClient *http.Client
	audit      *slog.Logger
	allowTTL   time.Duration
	listBounds ListObjectsBounds
	telemetry  *Telemetry
}

// WithAllowCache keeps allows OpenFGA answered for ttl on this replica (0, the default: off). A
// revoke made elsewhere takes up to ttl to bite here; denials and failures are never cached.
func WithAllowCache(ttl time.Duration) Option { return func(o *options) { o.allowTTL = ttl } }

// ListObjectsBounds are the OpenFGA server's ListObjects limits (its --listObjects-max-results and
// --listObjects-deadline). OpenFGA answers a ListObjects that hits either with a silently partial
// list, so an answer is taken as complete only when it has fewer than MaxResults objects and came
// back within Deadline; otherwise only its allows are used and the rest is checked. Set them no
// larger than the server's (larger only costs checks when lists are long). MaxResults 0 turns
// ListObjects off (listings then use batch checks alone).
type ListObjectsBounds struct {
	MaxResults int
	Deadline   time.Duration
}

// DefaultListObjectsBounds are OpenFGA's defaults (v1.22: 1000 results, 3 s).
var DefaultListObjectsBounds = ListObjectsBounds{MaxResults: 1000, Deadline: 3 * time.Second}

// WithListObjectsBounds declares the OpenFGA server's ListObjects limits (default
// DefaultListObjectsBounds).
func WithListObjectsBounds(b ListObjectsBounds) Option { return func(o *options) { o.listBounds = b } }

// WithTimeout bounds every OpenFGA request (default 2s); past it the door answers 503.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithConcurrency bounds the parallel checks of one Filter (default 8).
func WithConcurrency(n int) Option { return func(o *options) { o.limit = n } }

// WithAPIToken authenticates to an OpenFGA server run with --authn-method preshared.
func WithAPIToken(token string) Option { return func(o *options) { o.token = token } }

// WithHTTPClient replaces the HTTP client; per-request deadlines still come from WithTimeout.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithAuditLog receives one line per decision (default: slog.Default()).
func WithAuditLog(l *slog.Logger) Option { return func(o *options) { o.audit = l } }

func buildOptions(opts []Option) options {
	o := options{timeout: 2 * time.Second, limit: 8, listBounds: DefaultListObjectsBounds}
	for _, opt := range opts {
		opt(&o)
	}
	if o.limit < 1 {
		o.limit = 1
	}
	if o.httpClient == nil {
		o.httpClient = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: o.timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 64, // the default 2 would re-dial for every parallel Filter check
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	// Every call, the SDK's and the raw ones (batch-check, write), goes through this client.
	o.httpClient = o.telemetry.instrument(o.httpClient)
	if o.audit == nil {
		o.audit = slog.Default()
	}
	return o
}

func newAPIClient(url string, o options) (*openfga.APIClient, error) {
	headers := map[string]string{}
	if o.token != "" {
		// The SDK drops its own credentials when given an HTTP client, so the header is set here.
		headers["Authorization"] = "Bearer " + o.token
	}
	cfg, err := openfga.NewConfiguration(openfga.Configuration{
		ApiUrl:         strings.TrimRight(url, "/"),
		HTTPClient:     o.httpClient,
		DefaultHeaders: headers,
		// No SDK retries: its back-off sleeps past our deadline, and a caller is better served by a
		// prompt 503 it can retry than by a request that hangs.
		RetryParams: &openfga.RetryParams{MaxRetry: 0, MinWaitInMs: 0},
	})
	if err != nil {
		return nil, nserr.InvalidInputf("OpenFGA client for %q: %w", url, err)
	}
	return openfga.NewAPIClient(cfg), nil
}
