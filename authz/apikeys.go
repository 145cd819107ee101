package authz

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
)

// API keys live on the control root, one record per key under APIKeysPrefix, holding the SHA-256
// of the key's secret, never the secret: a copy of the control root does not let anyone call the
// catalog. A key is shown once, when it is created.
//
// A key reads "lck_<id>_<secret>": id is the record's name (12 hex digits, not secret: it appears
// in listings and logs), secret is 32 random bytes in base64url. The secret has 256 bits of
// entropy, so one SHA-256 is a sound verifier (a slow password hash buys nothing against keys that
// cannot be guessed, and would cost every request).
const (
	APIKeysPrefix = "_apikeys/"
	apiKeyMark    = "lck_"
	apiKeyIDLen   = 12
)

// APIKeyRecord is one API key as stored.
type APIKeyRecord struct {
	ID          string     `json:"id"`
	Hash        string     `json:"sha256"`
	Principal   string     `json:"principal"`
	Description string     `json:"description,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	// Extra keeps the fields of the stored record this version does not know.
	registry.Extra
}

func (r APIKeyRecord) Validate() error {
	if !validKeyID(r.ID) {
		return fmt.Errorf("api key id %q is not %d hex digits", r.ID, apiKeyIDLen)
	}
	if len(r.Hash) != 64 {
		return errors.New("api key hash must be a hex SHA-256")
	}
	if err := Principal(r.Principal).validate(); err != nil {
		return fmt.Errorf("api key principal: %w", err)
	}
	return nil
}

// Revoked reports whether the key no longer authenticates.
func (r APIKeyRecord) Revoked() bool { return r.RevokedAt != nil }

// APIKeyKey is where the record of key id lives.
func APIKeyKey(id string) string { return APIKeysPrefix + id + ".json" }

func validKeyID(id string) bool {
	if len(id) != apiKeyIDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// ParsePrincipal reads a principal as an operator writes it ("user:alice"), refusing anything a
// check could not use.
func ParsePrincipal(s string) (Principal, error) {
	p := Principal(strings.TrimSpace(s))
	if err := p.validate(); err != nil {
		return "", nserr.InvalidInputf("principal %q: expected user:<id>", s)
	}
	return p, nil
}

// APIKeys is the API key registry on the control root. It is the APIKeyVerifier of the server.
//
// Verification keeps a small per-replica cache of keys it accepted, so a request costs no read of
// the control root while its key is cached (see WithCacheTTL). A consequence to know: a key
// revoked through this APIKeys stops at once, but one revoked elsewhere (another replica, the
// `lancecat apikey revoke` command) is still accepted by this replica for up to the cache TTL
// (DefaultAPIKeyCacheTTL unless set). Only accepted keys are cached: an unknown, wrong or revoked
// key is read from the store every time, so a just-created key works at once and presenting
// made-up keys cannot fill the cache.
type APIKeys struct {
	store *registry.Store
	now   func() time.Time
	cache *keyCache // nil: every verification reads the store
}

var _ APIKeyVerifier = (*APIKeys)(nil)

// Defaults of the verification cache.
const (
	DefaultAPIKeyCacheTTL  = 30 * time.Second
	DefaultAPIKeyCacheSize = 10_000
)

// APIKeysOption configures NewAPIKeys.
type APIKeysOption func(*apiKeysConfig)

type apiKeysConfig struct {
	ttl  time.Duration
	size int
	now  func() time.Time
}

// WithCacheTTL sets how long an accepted key is trusted without reading its record again: the
// bound on how late a revocation made on another replica takes effect here. d <= 0 turns the cache
// off.
func WithCacheTTL(d time.Duration) APIKeysOption { return func(c *apiKeysConfig) { c.ttl = d } }

// WithCacheSize bounds the cached keys; when full, the oldest entry makes room. n <= 0 turns the
// cache off.
func WithCacheSize(n int) APIKeysOption { return func(c *apiKeysConfig) { c.size = n } }

// WithClock sets the clock of key creation times, revocation times and cache expiry (tests).
func WithClock(now func() time.Time) APIKeysOption { return func(c *apiKeysConfig) { c.now = now } }

// NewAPIKeys returns the key registry kept in store (the control root), caching accepted keys for
// DefaultAPIKeyCacheTTL unless opts say otherwise.
func NewAPIKeys(store *registry.Store, opts ...APIKeysOption) *APIKeys {
	cfg := apiKeysConfig{ttl: DefaultAPIKeyCacheTTL, size: DefaultAPIKeyCacheSize, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	k := &APIKeys{store: store, now: cfg.now}
	if cfg.ttl > 0 && cfg.size > 0 {
		k.cache = newKeyCache(cfg.ttl, cfg.size, cfg.now)
	}
	return k
}

// Create mints a key for principal and returns it in full: the only time the secret exists
// outside the caller's hands. Each key gets its own principal-independent id, minted with
// put-if-absent, so two creates never share a record.
func (k *APIKeys) Create(ctx context.Context, principal Principal, description string) (string, APIKeyRecord, error) {
	if err := principal.validate(); err != nil {
		return "", APIKeyRecord{}, nserr.InvalidInputf("api key principal %q: expected user:<id>", principal.String())
	}
	for range 3 {
		var idb [apiKeyIDLen / 2]byte
		var secret [32]byte
		if _, err := rand.Read(idb[:]); err != nil {
			return "", APIKeyRecord{}, err
		}
		if _, err := rand.Read(secret[:]); err != nil {
			return "", APIKeyRecord{}, err
		}
		id := hex.EncodeToString(idb[:])
		sec := base64.RawURLEncoding.EncodeToString(secret[:])
		rec := APIKeyRecord{
			ID: id, Hash: hashSecret(sec), Principal: principal.String(),
			Description: description, CreatedAt: k.now().UTC(),
		}
		err := registry.Create(ctx, k.store, APIKeyKey(id), rec)
		if errors.Is(err, registry.ErrExists) {
			continue // a 48-bit id collided: mint another
		}
		if err != nil {
			return "", APIKeyRecord{}, err
		}
		return apiKeyMark + id + "_" + sec, rec, nil
	}
	return "", APIKeyRecord{}, nserr.ServiceUnavailablef("could not mint an unused api key id")
}

// Revoke makes key id stop authenticating; revoking a revoked key is a no-op. An unknown id is a
// not-found error (code 1), so a typo is not mistaken for a revocation.
func (k *APIKeys) Revoke(ctx context.Context, id string) (APIKeyRecord, error) {
	if !validKeyID(id) {
		return APIKeyRecord{}, nserr.InvalidInputf("api key id %q is not %d lowercase hex digits", id, apiKeyIDLen)
	}
	// Evicted after the write, whatever its outcome: a verification that read the record before
	// the write cannot re-cache it after this (keyCache.evict).
	defer k.cache.evict(id)
	now := k.now().UTC()
	rec, err := registry.Mutate(ctx, k.store, APIKeyKey(id), func(r *APIKeyRecord) error {
		if r.RevokedAt == nil {
			r.RevokedAt = &now
		}
		return nil
	})
	if errors.Is(err, registry.ErrNotFound) {
		return APIKeyRecord{}, nserr.NamespaceNotFoundf("api key %s does not exist", id)
	}
	return rec, err
}

// List returns every key record (never a secret), oldest first. Unreadable records are refused:
// an operator auditing keys must not get a silently short list.
func (k *APIKeys) List(ctx context.Context) ([]APIKeyRecord, error) {
	listed, err := registry.List[APIKeyRecord](ctx, k.store, APIKeysPrefix)
	if err != nil {
		return nil, err
	}
	if len(listed.Skipped) > 0 {
		return nil, nserr.ServiceUnavailablef("unreadable api key records: %s", strings.Join(listed.Skipped, ", "))
	}
	out := listed.Records
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// VerifyAPIKey resolves a presented key to its principal. Every refusal reads the same to the
// caller ("not accepted"), so the answer does not tell an unknown id from a wrong secret.
func (k *APIKeys) VerifyAPIKey(ctx context.Context, key string) (Principal, error) {
	// Built on refusal only: the accepting path, cached, allocates nothing it need not.
	refuse := func() error { return nserr.Unauthenticatedf("api key not accepted") }
	id, secret, ok := splitAPIKey(key)
	if !ok {
		return "", refuse()
	}
	// The cache is keyed by the secret's digest, the one the record holds: the raw key is never
	// kept, and a hit is a digest the store accepted for this id within the TTL.
	sum := sha256.Sum256([]byte(secret))
	if p, ok := k.cache.get(id, sum); ok {
		return p, nil
	}
	gen := k.cache.generation()
	rec, _, err := registry.Read[APIKeyRecord](ctx, k.store, APIKeyKey(id))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return "", refuse()
	case err != nil:
		// The key store did not answer (or holds a broken record): never an allow, never a 401
		// that would make a client drop a good key.
		return "", nserr.Wrap(nserr.ServiceUnavailable, err, "the api key store is unavailable")
	}
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(hex.EncodeToString(sum[:]))) != 1 || rec.Revoked() {
		return "", refuse()
	}
	k.cache.put(id, sum, Principal(rec.Principal), gen)
	return Principal(rec.Principal), nil
}

func splitAPIKey(key string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(key, apiKeyMark)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, "_")
	if !ok || !validKeyID(id) || len(secret) < 32 {
		return "", "", false
	}
	return id, secret, true
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// keyCache holds the keys VerifyAPIKey accepted, for ttl each, at most size of them. Entries are
// kept in insertion order, which (one ttl for all) is expiry order: the oldest is evicted first,
// whether it expired or room is needed. A nil *keyCache caches nothing.
type keyCache struct {
	ttl  time.Duration
	size int
	now  func() time.Time // the APIKeys clock

	mu    sync.Mutex
	byID  map[string]*list.Element // of *keyEntry; an id has one secret, so one entry
	order *list.List               // oldest first
	// gen counts revocations: an accepted key is cached only if no revocation on this replica
	// ran while its record was being read, so a read from before a revoke never outlives it.
	gen uint64
}

type keyEntry struct {
	id        string
	sum       [sha256.Size]byte
	principal Principal
	expires   time.Time
}

func newKeyCache(ttl time.Duration, size int, now func() time.Time) *keyCache {
	return &keyCache{ttl: ttl, size: size, now: now, byID: map[string]*list.Element{}, order: list.New()}
}

// get returns the principal of a cached, unexpired key id whose secret digests to sum.
func (c *keyCache) get(id string, sum [sha256.Size]byte) (Principal, bool) {
	if c == nil {
		return "", false
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return "", false
	}
	e := el.Value.(*keyEntry)
	if !now.Before(e.expires) {
		c.remove(el)
		return "", false
	}
	// A wrong secret for a cached id misses (and the store refuses it); constant time all the same.
	if subtle.ConstantTimeCompare(e.sum[:], sum[:]) != 1 {
		return "", false
	}
	return e.principal, true
}

// generation is read before the store read a put may follow.
func (c *keyCache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches an accepted key unless a revocation ran since gen was read.
func (c *keyCache) put(id string, sum [sha256.Size]byte, p Principal, gen uint64) {
	if c == nil {
		return
	}
	expires := c.now().Add(c.ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
	for c.order.Len() >= c.size {
		c.remove(c.order.Front())
	}
	c.byID[id] = c.order.PushBack(&keyEntry{id: id, sum: sum, principal: p, expires: expires})
}

// evict forgets key id and fences out puts of reads that started before it.
func (c *keyCache) evict(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
}

func (c *keyCache) remove(el *list.Element) {
	delete(c.byID, el.Value.(*keyEntry).id)
	c.order.Remove(el)
}
