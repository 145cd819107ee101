package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
)

// Key-set refresh bounds (OIDCConfig overrides them).
const (
	// DefaultJWKSMinRefresh is the least time between two fetches of the issuer's keys: a token
	// naming a key we do not hold may cause a fetch, but not more often than this, whoever sends
	// such tokens and however many.
	DefaultJWKSMinRefresh = 10 * time.Second
	// DefaultJWKSUnknownKeyTTL is how long a key id the issuer's key set did not hold is answered
	// "unknown" without asking the issuer again.
	DefaultJWKSUnknownKeyTTL = time.Minute
	// maxUnknownKeyIDs bounds the unknown-key memory: a flood of random key ids cannot grow it.
	maxUnknownKeyIDs = 4096
)

// errFetchingKeys marks a key set that could not be fetched: no token can be judged (503).
var errFetchingKeys = errors.New("fetching keys")

// signingAlgs are the algorithms a token may be parsed with here; the verifier has already
// refused any algorithm the issuer does not use.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512, jose.EdDSA,
}

// jwks is the issuer's key set, cached. Unlike go-oidc's RemoteKeySet (which re-fetches for every
// token whose key it does not hold, so each forged token is a request to the issuer), it fetches
// at most once per minRefresh, one fetch at a time, and remembers for unknownTTL the key ids of
// tokens the fetched keys did not verify: forged tokens, however many and whatever key id they
// name, cost the issuer at most one fetch per minRefresh.
type jwks struct {
	url        string
	client     *http.Client
	now        func() time.Time
	minRefresh time.Duration
	unknownTTL time.Duration

	fetches singleflight.Group

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	lastTry time.Time // the last fetch, successful or not
	lastErr error     // its error
	unknown map[string]time.Time
}

func newJWKS(url string, client *http.Client, now func() time.Time, minRefresh, unknownTTL time.Duration) *jwks {
	if minRefresh <= 0 {
		minRefresh = DefaultJWKSMinRefresh
	}
	if unknownTTL <= 0 {
		unknownTTL = DefaultJWKSUnknownKeyTTL
	}
	return &jwks{url: url, client: client, now: now, minRefresh: minRefresh, unknownTTL: unknownTTL,
		unknown: map[string]time.Time{}}
}

// VerifySignature implements oidc.KeySet.
func (k *jwks) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(token, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a token must carry exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	if payload, _, err := k.verifyWith(k.cached(), jws, kid); err == nil {
		return payload, nil
	}
	// Not verified by the keys held: the issuer may have rotated (a new key id, or new material
	// under an old one). Ask it again, unless it was asked about this key id lately or was asked
	// anything at all less than minRefresh ago.
	if k.isUnknown(kid) {
		return nil, fmt.Errorf("the token's signing key %q is not the issuer's", kid)
	}
	keys, err := k.refresh(ctx)
	if err != nil {
		return nil, err
	}
	payload, known, err := k.verifyWith(keys, jws, kid)
	if err == nil {
		return payload, nil
	}
	k.markUnknown(kid)
	if known {
		return nil, err
	}
	return nil, fmt.Errorf("the token's signing key %q is not the issuer's", kid)
}

// verifyWith checks jws against the keys named kid (every key when the token names none); known
// says whether a key of that id was there.
func (k *jwks) verifyWith(keys []jose.JSONWebKey, jws *jose.JSONWebSignature, kid string) (payload []byte, known bool, err error) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if kid != "" {
			known = true
		}
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true, nil
		}
	}
	if known {
		return nil, true, errors.New("the token's signature does not verify")
	}
	return nil, false, errors.New("no key of the issuer verifies the token")
}

func (k *jwks) cached() []jose.JSONWebKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys
}

func (k *jwks) isUnknown(kid string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	until, ok := k.unknown[kid]
	return ok && k.now().Before(until)
}

func (k *jwks) markUnknown(kid string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if len(k.unknown) >= maxUnknownKeyIDs {
		for id, until := range k.unknown {
			if !now.Before(until) {
				delete(k.unknown, id)
			}
		}
		if len(k.unknown) >= maxUnknownKeyIDs {
			// All fresh: a flood of ids. The refresh limit still bounds the fetches.
			clear(k.unknown)
		}
	}
	k.unknown[kid] = now.Add(k.unknownTTL)
}

// refresh returns the key set, fetched anew unless the last fetch is younger than minRefresh (then
// the cached keys, or the last fetch's error). Concurrent callers share one fetch.
func (k *jwks) refresh(ctx context.Context) ([]jose.JSONWebKey, error) {
	ch := k.fetches.DoChan("", func() (any, error) {
		k.mu.Lock()
		if !k.lastTry.IsZero() && k.now().Sub(k.lastTry) < k.minRefresh {
			keys, err := k.keys, k.lastErr
			k.mu.Unlock()
			return keys, err
		}
		k.lastTry = k.now()
		k.mu.Unlock()
		// The fetch outlives any one request: it serves every caller waiting on it.
		keys, err := k.fetch(context.WithoutCancel(ctx))
		k.mu.Lock()
		defer k.mu.Unlock()
		k.lastErr = err
		if err != nil {
			return k.keys, err
		}
		k.keys = keys
		return keys, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]jose.JSONWebKey), nil
	}
}

func (k *jwks) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFetchingKeys, err)
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFetchingKeys, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFetchingKeys, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", errFetchingKeys, k.url, resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON Web Key Set: %w", errFetchingKeys, k.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			continue // a key of a type we cannot use (go-jose refuses it); the others still serve
		}
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}
