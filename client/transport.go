package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// headerTransport puts the client's headers and credentials on each attempt (a retried request
// asks the token source again, so a token that expired while waiting is replaced).
type headerTransport struct {
	base      http.RoundTripper
	headers   http.Header
	userAgent string
	apiKey    string
	bearer    string
	tokens    oauth2.TokenSource
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header[k] = append([]string(nil), v...)
	}
	if t.userAgent != "" {
		r.Header.Set("User-Agent", t.userAgent)
	}
	if t.apiKey != "" {
		r.Header.Set("x-api-key", t.apiKey)
	}
	if t.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+t.bearer)
	}
	if t.tokens != nil {
		tok, err := t.tokens.Token()
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("lancecat: obtaining an OAuth2 token: %w", err)
		}
		tok.SetAuthHeader(r)
	}
	return t.base.RoundTrip(r)
}

type idempotentKey struct{}

// Idempotent marks the requests made with ctx as safe to send twice (a POST that only reads, as
// most of the spec's reads are), so WithRetries retries them after a connection lost mid-answer
// too. The helpers mark their reads; use it on raw typed calls that only read.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	if v, _ := req.Context().Value(idempotentKey{}).(bool); v {
		return true
	}
	// What net/http itself trusts as idempotent.
	return req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
}

type retryPolicy struct {
	max     int
	backoff time.Duration
}

// retryTransport sends a request again when it failed without the server acting on it (see
// WithRetries). net/http's own retry (a reused connection the server had closed) stays underneath.
type retryTransport struct {
	base   http.RoundTripper
	policy retryPolicy
	// sleep waits d or until ctx is done (a test shortens it).
	sleep func(ctx context.Context, d time.Duration) error
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.policy.max == 0 {
		return t.base.RoundTrip(req)
	}
	body := newReplayable(req)
	defer body.finish()
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		r.Body = body.attempt()
		resp, err := t.base.RoundTrip(r)
		wait, again := t.retryable(req, resp, err)
		if !again || attempt >= t.policy.max || !body.replayable() {
			return resp, err
		}
		if resp != nil {
			// Drain a little so the connection can be reused; the answer is a refusal.
			_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
			resp.Body.Close()
		}
		if wait == 0 {
			wait = t.backoffFor(attempt)
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// backoffFor is the wait after the attempt-th failure: backoff·2^attempt, capped, jittered into
// its upper half so clients refused together do not come back together.
func (t *retryTransport) backoffFor(attempt int) time.Duration {
	d := t.policy.backoff
	for i := 0; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// retryable reports whether the outcome is a refusal to send again, and how long the server
// asked to wait (0: the backoff decides).
func (t *retryTransport) retryable(req *http.Request, resp *http.Response, err error) (time.Duration, bool) {
	if err != nil {
		if req.Context().Err() != nil {
			return 0, false
		}
		var certErr *tls.CertificateVerificationError
		var unknownCA x509.UnknownAuthorityError
		var hostErr x509.HostnameError
		var retrieve *oauth2.RetrieveError
		if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &retrieve) {
			return 0, false
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return 0, true // never reached the server
		}
		return 0, idempotent(req)
	}
	if resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if saysCommitted(resp) {
		return 0, false
	}
	return retryAfter(resp.Header.Get("Retry-After")), true
}

// saysCommitted reports whether a refusal's problem body says the operation committed all the
// same (lancecat's context "committed": "true"); the body stays readable for the caller.
func saysCommitted(resp *http.Response) bool {
	head, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	var p struct {
		Context map[string]string `json:"context"`
	}
	return json.Unmarshal(head, &p) == nil && p.Context["committed"] == "true"
}

// retryAfter is a Retry-After's wait (seconds or an HTTP date), capped; 0 when absent or bad.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		d = time.Duration(s) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = time.Until(at)
	}
	if d <= 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}

// replayable is a request body that can be sent again: through GetBody when the request has it
// (the typed calls' JSON bodies), else by keeping what was read of a streamed body, up to
// RetryBufferSize, and reading the rest from the source as before. Each attempt reads through its
// own handle; a handle from an abandoned attempt (net/http may still read or close it after
// RoundTrip returned) fails instead of consuming the source.
type replayable struct {
	mu       sync.Mutex
	srcMu    sync.Mutex
	getBody  func() (io.ReadCloser, error)
	src      io.ReadCloser
	kept     []byte
	read     int64 // bytes taken from src
	overflow bool
	srcErr   error
	gen      int
	attempts int
	closed   bool // the current handle was closed
	done     bool // no more attempts: closing the current handle closes src
	current  io.ReadCloser
}

var errAbandoned = errors.New("lancecat: request body of an abandoned attempt")

func newReplayable(req *http.Request) *replayable {
	r := &replayable{}
	switch {
	case req.Body == nil || req.Body == http.NoBody:
	case req.GetBody != nil:
		r.getBody = req.GetBody
		r.src = req.Body
	default:
		r.src = req.Body
	}
	return r
}

func (r *replayable) replayable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.src == nil {
		return true
	}
	return r.getBody != nil || !r.overflow && (r.srcErr == nil || r.srcErr == io.EOF)
}

// attempt is the body of the next attempt.
func (r *replayable) attempt() io.ReadCloser {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	if r.src == nil {
		return nil
	}
	if r.getBody != nil {
		if r.attempts == 1 {
			r.current = r.src
			return r.src
		}
		b, err := r.getBody()
		if err != nil {
			return io.NopCloser(&errReader{err})
		}
		r.current = b
		return b
	}
	r.gen++
	r.closed = false
	h := &handle{r: r, gen: r.gen}
	r.current = h
	return h
}

// finish: RoundTrip returns; the last attempt's body is the caller's to close now (net/http
// closes it when it is done sending, which may be after RoundTrip returned).
func (r *replayable) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.getBody == nil && r.src != nil && r.closed {
		r.src.Close()
	}
}

type handle struct {
	r   *replayable
	gen int
	pos int64
}

func (h *handle) Read(p []byte) (int, error) {
	r := h.r
	// r.mu guards the state and is never held across a read of the source (a Close from
	// net/http's goroutines must not wait on a slow source); srcMu orders the source's reads, so
	// what they return is kept in the order it came.
	if n, err, done := h.fromKept(p); done {
		return n, err
	}
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	if n, err, done := h.fromKept(p); done {
		return n, err // another handle read the source meanwhile
	}
	n, err := r.src.Read(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if n > 0 {
		if !r.overflow {
			if int64(len(r.kept))+int64(n) > RetryBufferSize {
				r.overflow, r.kept = true, nil
			} else {
				r.kept = append(r.kept, p[:n]...)
			}
		}
		r.read += int64(n)
		h.pos += int64(n)
	}
	if err != nil {
		r.srcErr = err
	}
	return n, err
}

// fromKept answers a read from what was kept, or the source's error, or that the source must be
// read (done false).
func (h *handle) fromKept(p []byte) (n int, err error, done bool) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.gen != r.gen {
		return 0, errAbandoned, true
	}
	if h.pos < r.read {
		if r.overflow {
			return 0, errAbandoned, true // what this attempt needs was not kept
		}
		n := copy(p, r.kept[h.pos:])
		h.pos += int64(n)
		return n, nil, true
	}
	if r.srcErr != nil {
		return 0, r.srcErr, true
	}
	return 0, nil, false
}

func (h *handle) Close() error {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.gen != r.gen {
		return nil
	}
	r.closed = true
	if r.done {
		return r.src.Close()
	}
	return nil
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }
