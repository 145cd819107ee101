package governance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/lancecat/lancecat/storage"
)

// receiver is a webhook endpoint that checks every signature and records what it was sent.
type receiver struct {
	t      *testing.T
	secret []byte
	mu     sync.Mutex
	fail   int // answer 500 to this many more requests
	got    []WebhookEvent
	seen   map[string]int // cursor → deliveries
	posts  int
}

func newReceiver(t *testing.T, secret string) (*receiver, *httptest.Server) {
	r := &receiver{t: t, secret: []byte(secret), seen: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if len(r.secret) == 0 {
		if sig := req.Header.Get(WebhookSignatureHeader); sig != "" {
			r.t.Errorf("an endpoint without a secret got a signature %q", sig)
		}
	} else if err := VerifyWebhook(r.secret, req.Header.Get(WebhookSignatureHeader), body, time.Now(), time.Minute); err != nil {
		r.t.Errorf("delivery with a bad signature: %v", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var p WebhookPayload
	if err := json.Unmarshal(body, &p); err != nil {
		r.t.Errorf("delivery body: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts++
	if r.fail > 0 {
		r.fail--
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	if want := p.Events[0].Cursor + ".." + p.Events[len(p.Events)-1].Cursor; req.Header.Get(WebhookDeliveryHeader) != want || p.Delivery != want {
		r.t.Errorf("delivery id %q / %q, want %q", req.Header.Get(WebhookDeliveryHeader), p.Delivery, want)
	}
	for _, ev := range p.Events {
		if r.seen[ev.Cursor] == 0 {
			r.got = append(r.got, ev)
		}
		r.seen[ev.Cursor]++
	}
}

func (r *receiver) objects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.got))
	for i, ev := range r.got {
		out[i] = ev.Object
	}
	return out
}

// checkOnce checks that every cursor was delivered exactly once.
func (r *receiver) checkOnce(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for c, n := range r.seen {
		assert.Equal(t, n, 1, "cursor %s delivered %d times", c, n)
	}
}

func (r *receiver) received(n int) poll.Check {
	return func(poll.LogT) poll.Result {
		if got := len(r.objects()); got < n {
			return poll.Continue("%d of %d events received", got, n)
		}
		return poll.Success()
	}
}

// startWebhooks runs a deliverer for one endpoint until the test ends (or cancel is called).
func startWebhooks(t *testing.T, e *Events, bucket storage.Bucket, h Webhook, o WebhookOptions) (cancel func()) {
	t.Helper()
	if o.Poll == 0 {
		o.Poll = 5 * time.Millisecond
	}
	o.MaxBackoff = 10 * time.Millisecond
	w, err := NewWebhooks(e.Journal(), bucket, []Webhook{h}, o)
	assert.NilError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	cancel = func() { stop(); <-done }
	t.Cleanup(cancel)
	return cancel
}

// initWebhook writes the endpoint's first state, so it starts at the journal's current end.
func initWebhook(t *testing.T, e *Events, bucket storage.Bucket, h Webhook) {
	t.Helper()
	w, err := NewWebhooks(e.Journal(), bucket, []Webhook{h}, WebhookOptions{})
	assert.NilError(t, err)
	assert.NilError(t, w.Init(context.Background()))
}

func emitN(t *testing.T, e *Events, from, n int, typ string) []string {
	t.Helper()
	var objects []string
	for i := from; i < from+n; i++ {
		obj := fmt.Sprintf("t%04d", i)
		e.Emit(Event{Type: typ, At: time.Now(), Object: obj, Attributes: map[string]string{"i": fmt.Sprint(i)}})
		objects = append(objects, obj)
	}
	assert.NilError(t, e.Journal().Flush(context.Background()))
	return objects
}

// TestWebhookDeliversInOrderSigned: every event recorded after the endpoint was configured
// arrives once, in journal order, in signed batches; what happened before it was configured does
// not (an endpoint starts at the journal's end).
func TestWebhookDeliversInOrderSigned(t *testing.T) {
	bucket := storage.NewMemory()
	e := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	defer e.Journal().Close()
	emitN(t, e, 0, 5, EventPolicySet) // before the endpoint exists
	r, srv := newReceiver(t, "s3cret")
	h := Webhook{URL: srv.URL + "/hook?token=abc", Secret: []byte("s3cret")}
	initWebhook(t, e, bucket, h)
	want := emitN(t, e, 5, 250, EventPolicySet)
	startWebhooks(t, e, bucket, h, WebhookOptions{})
	poll.WaitOn(t, r.received(len(want)), poll.WithTimeout(20*time.Second), poll.WithDelay(5*time.Millisecond))
	assert.DeepEqual(t, r.objects(), want)
	r.checkOnce(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Assert(t, r.posts >= 3, "250 events in batches of at most 100")
}

// TestWebhookRetriesUntil2xx: an endpoint answering 500 gets the same batch again (after a
// backoff) until it answers 2xx; the cursor moves only then, and the state records the failures
// meanwhile and clears them after.
func TestWebhookRetriesUntil2xx(t *testing.T) {
	bucket := storage.NewMemory()
	e := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	defer e.Journal().Close()
	r, srv := newReceiver(t, "k")
	r.fail = 3
	h := Webhook{URL: srv.URL, Secret: []byte("k")}
	initWebhook(t, e, bucket, h)
	want := emitN(t, e, 0, 20, EventGrantAdded)
	startWebhooks(t, e, bucket, h, WebhookOptions{})
	poll.WaitOn(t, r.received(len(want)), poll.WithTimeout(20*time.Second), poll.WithDelay(5*time.Millisecond))
	assert.DeepEqual(t, r.objects(), want)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		w, _ := NewWebhooks(e.Journal(), bucket, []Webhook{h}, WebhookOptions{})
		st, _, err := w.readState(context.Background(), webhookKey(h.URL))
		if err != nil || st.Delivered != uint64(len(want)) || st.Failures != 0 || st.LastError != "" {
			return poll.Continue("state %+v (%v)", st, err)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Assert(t, r.posts >= 4, "three refused posts, then the delivery")
}

// TestWebhookOneReplicaAtATime: two replicas deliver one endpoint from one control root while
// both emit: every event arrives exactly once (the claim keeps the second replica from sending
// a batch the first is sending), whichever replica recorded it.
func TestWebhookOneReplicaAtATime(t *testing.T) {
	bucket := storage.NewMemory()
	a := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	b := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	defer a.Journal().Close()
	defer b.Journal().Close()
	r, srv := newReceiver(t, "k")
	h := Webhook{URL: srv.URL, Secret: []byte("k")}
	initWebhook(t, a, bucket, h)
	startWebhooks(t, a, bucket, h, WebhookOptions{Holder: "a"})
	startWebhooks(t, b, bucket, h, WebhookOptions{Holder: "b"})
	var wg sync.WaitGroup
	for i, e := range []*Events{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 6 {
				emitN(t, e, i*1000+k*25, 25, EventTableProtected)
			}
		}()
	}
	wg.Wait()
	poll.WaitOn(t, r.received(300), poll.WithTimeout(30*time.Second), poll.WithDelay(5*time.Millisecond))
	assert.Equal(t, len(r.objects()), 300)
	r.checkOnce(t)
}

// TestWebhookFailover: the replica delivering an endpoint stops; once its claim expires another
// replica continues from the stored cursor: nothing is lost, and what was acknowledged is not
// sent again.
func TestWebhookFailover(t *testing.T) {
	bucket := storage.NewMemory()
	e := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	defer e.Journal().Close()
	r, srv := newReceiver(t, "k")
	h := Webhook{URL: srv.URL, Secret: []byte("k")}
	initWebhook(t, e, bucket, h)
	first := emitN(t, e, 0, 40, EventPolicySet)
	stopA := startWebhooks(t, e, bucket, h, WebhookOptions{Holder: "a", ClaimTTL: 200 * time.Millisecond})
	poll.WaitOn(t, r.received(len(first)), poll.WithTimeout(20*time.Second), poll.WithDelay(5*time.Millisecond))
	stopA()
	second := emitN(t, e, 40, 40, EventPolicySet)
	startWebhooks(t, e, bucket, h, WebhookOptions{Holder: "b", ClaimTTL: 200 * time.Millisecond})
	poll.WaitOn(t, r.received(len(first)+len(second)), poll.WithTimeout(20*time.Second), poll.WithDelay(5*time.Millisecond))
	assert.DeepEqual(t, r.objects(), append(first, second...))
	r.checkOnce(t)
}

// TestWebhookTypeFilter: an endpoint that asked for some event types gets only those, and the
// others do not hold its cursor back.
func TestWebhookTypeFilter(t *testing.T) {
	bucket := storage.NewMemory()
	e := NewEvents(16).WithJournal(NewJournal(bucket, 0, nil))
	defer e.Journal().Close()
	r, srv := newReceiver(t, "")
	h := Webhook{URL: srv.URL, Types: []string{EventGrantAdded}}
	r.secret = nil
	initWebhook(t, e, bucket, h)
	emitN(t, e, 0, 10, EventPolicySet)
	want := emitN(t, e, 10, 3, EventGrantAdded)
	emitN(t, e, 13, 10, EventPolicySet)
	startWebhooks(t, e, bucket, h, WebhookOptions{})
	poll.WaitOn(t, r.received(len(want)), poll.WithTimeout(20*time.Second), poll.WithDelay(5*time.Millisecond))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		w, _ := NewWebhooks(e.Journal(), bucket, []Webhook{h}, WebhookOptions{})
		st, _, err := w.readState(context.Background(), webhookKey(h.URL))
		end, _ := e.Journal().End(context.Background())
		if err != nil || st.Cursor != end {
			return poll.Continue("cursor %q, journal end %q", st.Cursor, end)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	assert.DeepEqual(t, r.objects(), want)
}

// TestVerifyWebhook: what a receiver accepts and refuses.
func TestVerifyWebhook(t *testing.T) {
	secret, body, at := []byte("k"), []byte(`{"events":[]}`), time.Unix(1_800_000_000, 0)
	good := SignWebhook(secret, at, body)
	for _, tc := range []struct {
		name, header string
		secret, body []byte
		now          time.Time
		err          string
	}{
		{"valid", good, secret, body, at, ""},
		{"within tolerance", good, secret, body, at.Add(4 * time.Minute), ""},
		{"body changed", good, secret, []byte(`{"events":[1]}`), at, "mismatch"},
		{"other secret", good, []byte("x"), body, at, "mismatch"},
		{"replayed later", good, secret, body, at.Add(10 * time.Minute), "tolerance"},
		{"no signature", "t=1800000000", secret, body, at, "malformed"},
		{"garbage", "v1=abc,t=soon", secret, body, at, "malformed"},
		{"empty", "", secret, body, at, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyWebhook(tc.secret, tc.header, tc.body, tc.now, 5*time.Minute)
			if tc.err == "" {
				assert.NilError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

// TestNewWebhooksRefusesBadURLs: an endpoint must be an absolute http(s) URL, and the error does
// not print its query (where tokens go).
func TestNewWebhooksRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y?token=secret", "/relative?token=secret", "http://?token=secret", "file:///etc/passwd"} {
		_, err := NewWebhooks(nil, storage.NewMemory(), []Webhook{{URL: u}}, WebhookOptions{})
		assert.ErrorContains(t, err, "not an http(s) URL", u)
		assert.Assert(t, !containsToken(err.Error()), err.Error())
	}
}

func containsToken(s string) bool {
	for i := 0; i+len("secret") <= len(s); i++ {
		if s[i:i+len("secret")] == "secret" {
			return true
		}
	}
	return false
}
