package governance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// Webhook delivery of the journal: every event the catalog records is POSTed, in journal order,
// to each configured endpoint, signed, retried until the endpoint answers 2xx.
//
// Across replicas one delivers each endpoint at a time. The endpoint's state object on the
// control root, _webhooks/<sha256 of the URL>.json, holds the cursor delivered up to and a claim
// (holder, expiry). A replica that finds events past the cursor claims the state with
// put-if-match (only an expired claim or its own may be taken), delivers one batch, and advances
// the cursor with put-if-match on the ETag of its own claim: a replica that lost its claim while
// delivering learns it at the put and stops, and the new holder delivers from the stored cursor.
// Delivery is therefore at least once: a batch is repeated only when a replica dies (or loses its
// claim) between the endpoint's 2xx and the cursor's put. Each request carries a delivery id (its
// first and last cursor) so a receiver can drop a repeat. An idle endpoint costs one journal
// listing per poll and no writes.
//
// A new endpoint starts at the journal's end when its state is first written: it receives what
// happens from then on, not the retained history.

// WebhookPrefix is where the endpoints' delivery state lives on the control root.
const WebhookPrefix = "_webhooks/"

// Webhook headers.
const (
	WebhookSignatureHeader = "Lancecat-Signature" // t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
	WebhookDeliveryHeader  = "Lancecat-Delivery"  // <first cursor>..<last cursor>
)

// Webhook is one endpoint.
type Webhook struct {
	URL    string
	Secret []byte   // signs every request; empty: unsigned (say so in the operator's config)
	Types  []string // event types delivered; empty: all
}

// WebhookOptions tune delivery (zero values: the defaults).
type WebhookOptions struct {
	Holder     string        // this replica's name in claims (default: random)
	Poll       time.Duration // how often an idle endpoint looks for new events (1 s)
	ClaimTTL   time.Duration // how long a claim lasts without a write (30 s)
	Timeout    time.Duration // one request's bound (10 s)
	MaxBackoff time.Duration // retry backoff ceiling (5 min)
	Batch      int           // events per request (100)
	Client     *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// WebhookPayload is the JSON body of a delivery.
type WebhookPayload struct {
	Delivery string         `json:"delivery"`
	Reset    bool           `json:"reset,omitempty"` // events were pruned before this endpoint got them
	Events   []WebhookEvent `json:"events"`
}

// WebhookEvent is one event as delivered.
type WebhookEvent struct {
	Cursor     string            `json:"cursor"`
	Type       string            `json:"type"`
	At         time.Time         `json:"at"`
	Actor      string            `json:"actor,omitempty"`
	Object     string            `json:"object,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
}

// webhookState is an endpoint's delivery state on the control root. The URL itself is not
// stored: it may carry a token.
type webhookState struct {
	Cursor      string    `json:"cursor"`
	Holder      string    `json:"holder,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
	Delivered   uint64    `json:"delivered"`
	Failures    uint64    `json:"failures"` // consecutive failed attempts of the current batch
	LastError   string    `json:"last_error,omitempty"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
}

// Webhooks delivers the journal to its endpoints.
type Webhooks struct {
	journal *Journal
	bucket  storage.Bucket
	hooks   []Webhook
	o       WebhookOptions
}

// NewWebhooks delivers journal's events to hooks, keeping the state on bucket (the control root).
func NewWebhooks(journal *Journal, bucket storage.Bucket, hooks []Webhook, o WebhookOptions) (*Webhooks, error) {
	for _, h := range hooks {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("webhook %q: not an http(s) URL", redactURL(h.URL))
		}
	}
	if o.Holder == "" {
		o.Holder = "replica-" + randomHex(6)
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.ClaimTTL <= 0 {
		o.ClaimTTL = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Client == nil {
		// Redirects are not followed: a signed event goes to the configured endpoint or nowhere.
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Webhooks{journal: journal, bucket: bucket, hooks: hooks, o: o}, nil
}

// Init writes the state of every endpoint that has none yet, so each starts at the journal's end
// as of now: a server calls it before it serves, and the first change it serves is delivered.
func (w *Webhooks) Init(ctx context.Context) error {
	for _, h := range w.hooks {
		if _, _, err := w.readState(ctx, webhookKey(h.URL)); !errors.Is(err, storage.ErrNotFound) {
			continue // there, or unreadable (Run says so)
		}
		if _, err := w.step(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// Run delivers until ctx ends, one goroutine per endpoint.
func (w *Webhooks) Run(ctx context.Context) {
	done := make(chan struct{}, len(w.hooks))
	for _, h := range w.hooks {
		go func() {
			defer func() { done <- struct{}{} }()
			w.run(ctx, h)
		}()
	}
	for range w.hooks {
		<-done
	}
}

func webhookKey(rawURL string) string {
	sum := sha256.Sum256([]byte(rawURL))
	return WebhookPrefix + hex.EncodeToString(sum[:16]) + ".json"
}

// run is one endpoint's loop: look, claim, deliver, advance; back off on failure.
func (w *Webhooks) run(ctx context.Context, h Webhook) {
	log := w.o.Logger.With(slog.String("webhook", redactURL(h.URL)))
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		delivered, err := w.step(ctx, h)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			var fail *deliveryError
			if errors.As(err, &fail) {
				wait = min(w.o.MaxBackoff, time.Second<<min(fail.attempt-1, 16))
				log.Warn("webhook delivery failed; retrying", slog.Uint64("attempt", fail.attempt), slog.Duration("in", wait), slog.String("error", fail.err.Error()))
			} else {
				wait = w.o.Poll
				log.Warn("webhook state", slog.String("error", err.Error()))
			}
		case delivered:
			wait = 0 // more may be waiting
		default:
			wait = w.o.Poll
		}
	}
}

// deliveryError is an endpoint that did not take a batch.
type deliveryError struct {
	attempt uint64
	err     error
}

func (e *deliveryError) Error() string { return e.err.Error() }

// step delivers at most one batch; it reports whether it did.
func (w *Webhooks) step(ctx context.Context, h Webhook) (bool, error) {
	key := webhookKey(h.URL)
	st, etag, err := w.readState(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		end, err := w.journal.End(ctx)
		if err != nil {
			return false, err
		}
		// Whoever writes the first state fixes where the endpoint starts.
		_, err = w.bucket.PutIfAbsent(ctx, key, bytes.NewReader(mustJSON(webhookState{Cursor: end})), -1)
		if err != nil && !errors.Is(err, storage.ErrExists) {
			return false, fmt.Errorf("webhook state: %w", err)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now := w.o.Now()
	if st.Holder != "" && st.Holder != w.o.Holder && now.Before(st.ExpiresAt) {
		return false, nil // another replica delivers this endpoint
	}
	events, next, reset, err := w.journal.Since(ctx, st.Cursor, w.o.Batch)
	if err != nil {
		return false, err
	}
	if len(events) == 0 {
		return false, nil
	}
	// Claim (or renew) before delivering, so no other replica delivers the same batch meanwhile.
	st.Holder, st.ExpiresAt = w.o.Holder, now.Add(w.o.ClaimTTL)
	if etag, err = w.putState(ctx, key, st, etag); err != nil {
		return false, err
	}
	send := events[:0:0]
	for _, ev := range events {
		if len(h.Types) == 0 || slices.Contains(h.Types, ev.Type) {
			send = append(send, ev)
		}
	}
	if len(send) > 0 {
		st.LastAttempt = now
		if err := w.post(ctx, h, send, reset); err != nil {
			st.Failures++
			st.LastError = err.Error()
			if _, perr := w.putState(ctx, key, st, etag); perr != nil {
				w.o.Logger.Warn("webhook state", slog.String("error", perr.Error()))
			}
			return false, &deliveryError{attempt: st.Failures, err: err}
		}
	}
	st.Cursor, st.Delivered, st.Failures, st.LastError = next, st.Delivered+uint64(len(send)), 0, ""
	// The endpoint has the batch: record it even while shutting down, or the next holder sends it
	// again.
	putCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.o.Timeout)
	defer cancel()
	if _, err := w.putState(putCtx, key, st, etag); err != nil {
		return false, err
	}
	return true, nil
}

func (w *Webhooks) readState(ctx context.Context, key string) (webhookState, string, error) {
	rc, info, err := w.bucket.Get(ctx, key)
	if err != nil {
		return webhookState{}, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return webhookState{}, "", fmt.Errorf("webhook state: %w", err)
	}
	var st webhookState
	if err := json.Unmarshal(data, &st); err != nil {
		// Not ours to repair silently: an operator deletes it to restart the endpoint at the end.
		return webhookState{}, "", fmt.Errorf("webhook state %s is not readable (delete it to restart delivery from now): %w", key, err)
	}
	return st, info.ETag, nil
}

// putState writes st over the version etag names; losing means another replica claimed it.
func (w *Webhooks) putState(ctx context.Context, key string, st webhookState, etag string) (string, error) {
	info, err := w.bucket.PutIfMatch(ctx, key, bytes.NewReader(mustJSON(st)), -1, etag)
	if err != nil {
		return "", fmt.Errorf("webhook state: %w", err)
	}
	return info.ETag, nil
}

// post sends one batch; only a 2xx counts as delivered.
func (w *Webhooks) post(ctx context.Context, h Webhook, events []Event, reset bool) error {
	p := WebhookPayload{Delivery: events[0].Cursor + ".." + events[len(events)-1].Cursor, Reset: reset,
		Events: make([]WebhookEvent, len(events))}
	for i, ev := range events {
		p.Events[i] = WebhookEvent(ev)
	}
	body := mustJSON(p)
	// A delivery under way finishes even while the server shuts down (bounded by the timeout):
	// cut off, the endpoint may have taken the batch without our knowing, and the next holder would
	// send it again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "lancecat-webhook/1")
	req.Header.Set(WebhookDeliveryHeader, p.Delivery)
	if len(h.Secret) > 0 {
		req.Header.Set(WebhookSignatureHeader, SignWebhook(h.Secret, w.o.Now(), body))
	}
	resp, err := w.o.Client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", redactURL(h.URL), errors.Unwrap(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s", redactURL(h.URL), resp.Status)
	}
	return nil
}

// SignWebhook is the signature header's value for body sent at t.
func SignWebhook(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + webhookMAC(secret, ts, body)
}

func webhookMAC(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyWebhook checks a delivery's signature header against body, refusing one signed more than
// tolerance away from now (a replayed request): what a receiver written in Go calls.
func VerifyWebhook(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("webhook signature: malformed header")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook signature: timestamp outside the tolerance")
	}
	want := webhookMAC(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook signature: mismatch")
}

// redactURL keeps a URL's scheme, host and path for logs (no query or user info: tokens live
// there).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain structs are marshalled
	}
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
