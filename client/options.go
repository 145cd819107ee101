package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Option configures a Client (New's functional options).
type Option func(*config) error

type config struct {
	apiKey      string
	bearer      string
	tokenSource oauth2.TokenSource
	credentials *clientcredentials.Config
	tlsConfig   *tls.Config
	httpClient  *http.Client
	transport   http.RoundTripper
	headers     http.Header
	delimiter   string
	userAgent   string
	pageSize    int
	retry       retryPolicy
}

// DefaultDelimiter joins the parts of an object id in a route's {id} unless WithDelimiter says
// otherwise. It must be the server's (`lancecat serve --delimiter`).
const DefaultDelimiter = "$"

// DefaultUserAgent is sent unless WithUserAgent says otherwise.
const DefaultUserAgent = "lancecat-go-client"

// WithAPIKey sends key as `x-api-key` on every request (a key lancecat issued). An empty key
// sends none (WithAPIKey(os.Getenv("LANCECAT_API_KEY")) serves an open catalog too).
func WithAPIKey(key string) Option {
	return func(c *config) error {
		c.apiKey = key
		return nil
	}
}

// WithBearerToken sends `Authorization: Bearer token` on every request: a token obtained
// elsewhere that does not expire while the client is used (WithOAuth2 for one that does). An
// empty token sends none.
func WithBearerToken(token string) Option {
	return func(c *config) error {
		c.bearer = token
		return nil
	}
}

// WithOAuth2 sends a token of ts as `Authorization: Bearer …` on every request (an OIDC access
// token the server verifies). Tokens are cached and ts is asked again only when the one held
// expires (oauth2.ReuseTokenSource), so ts may be any source, e.g. one that refreshes.
func WithOAuth2(ts oauth2.TokenSource) Option {
	return func(c *config) error {
		if ts == nil {
			return errors.New("WithOAuth2: nil token source")
		}
		c.tokenSource = oauth2.ReuseTokenSource(nil, ts)
		c.credentials = nil
		return nil
	}
}

// WithClientCredentials obtains tokens with the OAuth2 client-credentials grant (RFC 6749 §4.4)
// from cfg.TokenURL, fetching a new one before the held one expires. The token requests go
// through the same TLS configuration and transport as the catalog's (WithTLSConfig,
// WithTransport), without retries or the catalog's headers.
func WithClientCredentials(cfg clientcredentials.Config) Option {
	return func(c *config) error {
		if cfg.TokenURL == "" || cfg.ClientID == "" {
			return errors.New("WithClientCredentials: TokenURL and ClientID are required")
		}
		c.credentials = &cfg
		c.tokenSource = nil
		return nil
	}
}

// WithTLSConfig sets the TLS configuration of the connections to the catalog (a private CA, a
// client certificate). With WithTransport or WithHTTPClient it applies to their transport, which
// must then be an *http.Transport.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) error {
		c.tlsConfig = cfg
		return nil
	}
}

// WithRetries sends a request again, up to n more times, when it failed without the server acting
// on it: an answer 503 (ServiceUnavailable: the spec says "wait and retry") or 429 (Throttling),
// a connection that could not be made, and — for idempotent requests only (GET, PUT, DELETE, HEAD,
// and the read operations the helpers mark with Idempotent) — a connection lost before the answer.
// Waits grow from backoff, doubling each time with jitter, up to MaxBackoff; an answer's
// Retry-After is honoured (up to MaxRetryAfter). A streamed body (Insert, MergeInsert) is kept
// for a replay up to RetryBufferSize bytes; a larger one is sent once. An answer that says it
// committed is never sent again.
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *config) error {
		if n < 0 {
			return errors.New("WithRetries: negative count")
		}
		if backoff <= 0 {
			backoff = 200 * time.Millisecond
		}
		c.retry.max = n
		c.retry.backoff = backoff
		return nil
	}
}

// Bounds of WithRetries.
const (
	// MaxBackoff caps the wait between two attempts computed from the backoff.
	MaxBackoff = 30 * time.Second
	// MaxRetryAfter caps what a Retry-After may ask to wait.
	MaxRetryAfter = 2 * time.Minute
	// RetryBufferSize is how much of a streamed request body is kept to send it again.
	RetryBufferSize = 8 << 20
)

// WithHTTPClient sends the requests with hc's transport, timeout, cookie jar and redirect policy
// (the client adds its own layers on top; hc itself is not modified).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("WithHTTPClient: nil client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithTransport sends the requests through rt (instrumentation, a proxy, a test double). It wins
// over the transport of WithHTTPClient.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) error {
		if rt == nil {
			return errors.New("WithTransport: nil transport")
		}
		c.transport = rt
		return nil
	}
}

// WithHeaders adds headers to every request (set, not appended; the auth options' headers win).
func WithHeaders(h map[string]string) Option {
	return func(c *config) error {
		if c.headers == nil {
			c.headers = http.Header{}
		}
		for k, v := range h {
			c.headers.Set(k, v)
		}
		return nil
	}
}

// WithDelimiter sets the delimiter joining id parts (ID) and sent as `?delimiter=` on every spec
// request; it must be the server's (`--delimiter`), which refuses any other.
func WithDelimiter(d string) Option {
	return func(c *config) error {
		if d == "" {
			return errors.New("WithDelimiter: empty delimiter")
		}
		c.delimiter = d
		return nil
	}
}

// WithUserAgent sets the User-Agent of every request.
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		c.userAgent = ua
		return nil
	}
}

// WithPageSize asks for pages of n items in the helpers' listings (0: the server's default;
// the server may cap it). The iterators read page after page whatever the size.
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 0 || n > 1<<20 {
			return errors.New("WithPageSize: out of range")
		}
		c.pageSize = n
		return nil
	}
}

// baseTransport is the transport under the client's layers, with the TLS configuration applied.
func (c *config) baseTransport() (http.RoundTripper, error) {
	rt := c.transport
	if rt == nil && c.httpClient != nil {
		rt = c.httpClient.Transport
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	if c.tlsConfig == nil {
		return rt, nil
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return nil, errors.New("WithTLSConfig: the transport is not an *http.Transport")
	}
	t = t.Clone()
	t.TLSClientConfig = c.tlsConfig.Clone()
	return t, nil
}

// tokens is the OAuth2 token source, if any, with its token requests over base.
func (c *config) tokens(base http.RoundTripper) oauth2.TokenSource {
	if c.credentials != nil {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: base, Timeout: time.Minute})
		return c.credentials.TokenSource(ctx) // a ReuseTokenSource already
	}
	return c.tokenSource
}
