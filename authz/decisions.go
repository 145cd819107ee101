package authz

import (
	"context"
	"sync"
	"time"
)

// Decision reuse. A check's answer is reused at two scopes, both keyed by (principal, relation,
// object) under the authorizer's pinned model:
//
//   - per request (WithDecisions): one request never asks OpenFGA the same question twice. Allows
//     and denials are both kept, for the life of the request only; a failure (OpenFGA down, slow)
//     is never kept, so the next ask tries again and fails or answers for itself.
//   - per replica (WithAllowCache, off by default): an allow is reused for at most the cache's
//     TTL. Only allows OpenFGA actually answered are stored: a denial is never cached (a grant
//     bites at once), and an outage is an error, never an allow, so nothing is ever cached that
//     OpenFGA did not say. A revoke made on another replica takes up to the TTL to bite here (the
//     API-key cache's bound is 30 s; keep this one at or below it).
//
// Every tuple write or delete through this authorizer drops both (the request's and the
// replica's): a revoke, a managed_access switch or a re-parenting bites at once on the replica that
// made it.

type decisionKey struct {
	principal Principal
	relation  string
	object    Object
}

// requestDecisions is one request's memo of answers.
type requestDecisions struct {
	mu      sync.Mutex
	answers map[decisionKey]bool
	// listed memoizes ListObjects answers within the request, by (principal, relation, type).
	listed map[decisionKey]listedObjects
}

type decisionsKey struct{}

// WithDecisions gives ctx a fresh per-request decision memo: checks made with the returned context
// (and contexts derived from it) ask OpenFGA each question at most once. Install it once per
// request, where the principal is settled; never on a long-lived context (a background loop), whose
// memo would never expire.
func WithDecisions(ctx context.Context) context.Context {
	return context.WithValue(ctx, decisionsKey{}, &requestDecisions{})
}

func decisionsFrom(ctx context.Context) *requestDecisions {
	d, _ := ctx.Value(decisionsKey{}).(*requestDecisions)
	return d
}

func (d *requestDecisions) get(k decisionKey) (allowed, ok bool) {
	if d == nil {
		return false, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	allowed, ok = d.answers[k]
	return allowed, ok
}

func (d *requestDecisions) put(k decisionKey, allowed bool) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.answers == nil {
		d.answers = map[decisionKey]bool{}
	}
	d.answers[k] = allowed
}

func (d *requestDecisions) getListed(k decisionKey) (listedObjects, bool) {
	if d == nil {
		return listedObjects{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.listed[k]
	return l, ok
}

func (d *requestDecisions) putListed(k decisionKey, l listedObjects) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listed == nil {
		d.listed = map[decisionKey]listedObjects{}
	}
	d.listed[k] = l
}

func (d *requestDecisions) forget() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers, d.listed = nil, nil
}

// allowCache is the per-replica cache of allows (nil: off).
type allowCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	expires map[decisionKey]time.Time
}

// maxAllowCacheEntries bounds the cache's memory; past it the cache is emptied and refills.
const maxAllowCacheEntries = 100_000

func newAllowCache(ttl time.Duration) *allowCache {
	if ttl <= 0 {
		return nil
	}
	return &allowCache{ttl: ttl, now: time.Now, expires: map[decisionKey]time.Time{}}
}

func (c *allowCache) allowed(k decisionKey) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.expires[k]
	if !ok {
		return false
	}
	if !c.now().Before(exp) {
		delete(c.expires, k)
		return false
	}
	return true
}

func (c *allowCache) putAllow(k decisionKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.expires) >= maxAllowCacheEntries {
		c.expires = map[decisionKey]time.Time{}
	}
	c.expires[k] = c.now().Add(c.ttl)
}

func (c *allowCache) forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expires = map[decisionKey]time.Time{}
}

// forgetDecisions drops every reused answer a tuple change may have made wrong.
func (f *OpenFGA) forgetDecisions(ctx context.Context) {
	decisionsFrom(ctx).forget()
	f.allows.forget()
}
