package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
)

// Client calls one catalog. It is safe for concurrent use.
type Client struct {
	// Spec is the Lance Namespace REST spec's typed client and Control lancecat's control plane's,
	// for what the helpers do not cover. Their requests go through the client's options (auth,
	// headers, retries; Spec's also get the delimiter as ?delimiter= unless one is given, while
	// Control's operations that take one need it passed); pass their answers to Check.
	Spec    *nsclient.ClientWithResponses
	Control *controlclient.ClientWithResponses

	base      string
	http      *http.Client
	delimiter string
	pageSize  int
}

// New is a client of the catalog at baseURL (e.g. "http://127.0.0.1:2333").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("lancecat: base URL %q is not an http(s) URL", baseURL)
	}
	cfg := config{delimiter: DefaultDelimiter, userAgent: DefaultUserAgent}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("lancecat: %w", err)
		}
	}
	base, err := cfg.baseTransport()
	if err != nil {
		return nil, fmt.Errorf("lancecat: %w", err)
	}
	rt := &retryTransport{
		base: &headerTransport{
			base: base, headers: cfg.headers, userAgent: cfg.userAgent,
			apiKey: cfg.apiKey, bearer: cfg.bearer, tokens: cfg.tokens(base),
		},
		policy: cfg.retry,
		sleep:  sleepCtx,
	}
	hc := &http.Client{Transport: rt}
	if cfg.httpClient != nil {
		hc.Timeout, hc.Jar, hc.CheckRedirect = cfg.httpClient.Timeout, cfg.httpClient.Jar, cfg.httpClient.CheckRedirect
	}
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), http: hc, delimiter: cfg.delimiter, pageSize: cfg.pageSize}
	c.Spec, err = nsclient.NewClientWithResponses(c.base, nsclient.WithHTTPClient(hc),
		nsclient.WithRequestEditorFn(c.addDelimiter), nsclient.WithRequestEditorFn(c.fixDotRoot))
	if err != nil {
		return nil, err
	}
	c.Control, err = controlclient.NewClientWithResponses(c.base, controlclient.WithHTTPClient(hc),
		controlclient.WithRequestEditorFn(c.fixDotRoot))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// addDelimiter puts the client's delimiter on a spec request that names none.
func (c *Client) addDelimiter(_ context.Context, req *http.Request) error {
	q := req.URL.Query()
	if q.Get("delimiter") == "" {
		q.Set("delimiter", c.delimiter)
		req.URL.RawQuery = q.Encode()
	}
	return nil
}

// rootPlaceholder stands for the root namespace in a route while the delimiter is "." or "..":
// spelt plainly, the generated clients' URL resolution (RFC 3986) removes it as a dot segment
// (/v1/namespace/./list became /v1/namespace/list). It cannot be an id (ids hold no control
// characters); fixDotRoot replaces it with the delimiter percent-encoded, which no resolution
// touches and the server decodes to the delimiter.
const rootPlaceholder = "\x00root\x00"

func dotSegment(delimiter string) bool { return delimiter == "." || delimiter == ".." }

// fixDotRoot spells rootPlaceholder in req's path as the client's delimiter percent-encoded
// ("%2E"); any other request is left as it is.
func (c *Client) fixDotRoot(_ context.Context, req *http.Request) error {
	if !strings.Contains(req.URL.Path, rootPlaceholder) {
		return nil
	}
	raw := strings.ReplaceAll(req.URL.EscapedPath(), url.PathEscape(rootPlaceholder), strings.Repeat("%2E", len(c.delimiter)))
	req.URL.Path = strings.ReplaceAll(req.URL.Path, rootPlaceholder, c.delimiter)
	req.URL.RawPath = raw
	return nil
}

// ID is an object id as a spec route's {id}: its parts joined by the delimiter (the root
// namespace is ID()).
func (c *Client) ID(parts ...string) string {
	return strings.Join(parts, c.delimiter)
}

// Delimiter is the delimiter the client joins ids with.
func (c *Client) Delimiter() string { return c.delimiter }

// HTTPClient is the client the typed calls go through (the options' layers included), for a
// request neither typed client makes.
func (c *Client) HTTPClient() *http.Client { return c.http }

// checkID refuses an id a route cannot carry: an empty part, or one holding the delimiter (it
// would name another object).
func (c *Client) checkID(kind string, id []string, min int) error {
	if len(id) < min {
		return fmt.Errorf("lancecat: a %s id needs at least %d part(s), got %q: %w", kind, min, id, ErrInvalidInput)
	}
	for _, p := range id {
		if p == "" || strings.Contains(p, c.delimiter) {
			return fmt.Errorf("lancecat: %s id %q: a part is empty or holds the delimiter %q: %w", kind, id, c.delimiter, ErrInvalidInput)
		}
	}
	return nil
}

// check is Check for the helpers: the error names the operation.
func check(op string, resp any, err error) error {
	if err := Check(resp, err); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// problemOf reads a failed streamed answer into its *Problem (the body is small: an error).
func problemOf(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("lancecat: %d, reading the error body: %w", resp.StatusCode, err)
	}
	return CheckHTTP(resp, body)
}

// limit is the page size to ask for (nil: the server's default).
func (c *Client) limit() *int {
	if c.pageSize == 0 {
		return nil
	}
	return &c.pageSize
}

func (c *Client) limit32() *int32 {
	if c.pageSize == 0 {
		return nil
	}
	return ptr(int32(c.pageSize))
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
