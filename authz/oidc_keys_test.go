package authz_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// countingJWKS serves one signing key ("k1") and counts how often the key set is fetched.
type countingJWKS struct {
	srv     *httptest.Server
	key     *rsa.PrivateKey
	fetches atomic.Int64
}

func newCountingJWKS(t *testing.T) *countingJWKS {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	j := &countingJWKS{key: key}
	j.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.fetches.Add(1)
		time.Sleep(5 * time.Millisecond) // a real issuer is not instant: let concurrent tokens overlap
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"},
		}})
	}))
	t.Cleanup(j.srv.Close)
	return j
}

func signToken(t *testing.T, key *rsa.PrivateKey, kid string, c jwt.Claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, opts)
	assert.NilError(t, err)
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	assert.NilError(t, err)
	return tok
}

// TestOIDCUnknownKeysDoNotFetchPerToken: tokens signed by keys the issuer does not hold (random key
// ids, a known id with a forged signature, no id at all) used to cost one JWKS fetch each (200
// concurrent → 95 fetches). The key set is now fetched at most once per refresh interval, and a
// refused key id is remembered.
func TestOIDCUnknownKeysDoNotFetchPerToken(t *testing.T) {
	j := newCountingJWKS(t)
	const iss = "https://idp.example"
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: iss, Audience: "lancecat", JWKSURL: j.srv.URL,
		JWKSMinRefresh: time.Hour, JWKSUnknownKeyTTL: time.Hour})
	assert.NilError(t, err)
	now := time.Now()
	claims := jwt.Claims{Issuer: iss, Subject: "mallory", Audience: jwt.Audience{"lancecat"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)

	ctx := context.Background()
	var wg sync.WaitGroup
	var wrongCode atomic.Int64
	for i := range 200 {
		kid := fmt.Sprintf("forged-%d", i)
		switch i % 4 {
		case 0:
			kid = "k1" // the issuer's key id, someone else's signature
		case 1:
			kid = "" // no key id: every held key is tried
		case 2:
			kid = "same-forged-id"
		}
		tok := signToken(t, forger, kid, claims)
		wg.Go(func() {
			if _, err := v.VerifyToken(ctx, tok); nserr.CodeOf(err) != nserr.Unauthenticated {
				wrongCode.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, wrongCode.Load(), int64(0), "every forged token is a 401")
	assert.Equal(t, j.fetches.Load(), int64(1), "one fetch for 200 tokens naming unknown keys")

	// The issuer's own tokens still verify, from the cache.
	p, err := v.VerifyToken(ctx, signToken(t, j.key, "k1", claims))
	assert.NilError(t, err)
	assert.Equal(t, p, authz.User("mallory"))
	assert.Equal(t, j.fetches.Load(), int64(1))
}

// TestOIDCKeyRotationStillFetches: a key id the cache lacks is fetched once the refresh interval
// has passed, so a rotated issuer key needs no restart.
func TestOIDCKeyRotationStillFetches(t *testing.T) {
	j := newCountingJWKS(t)
	const iss = "https://idp.example"
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: iss, Audience: "lancecat", JWKSURL: j.srv.URL,
		JWKSMinRefresh: time.Millisecond, JWKSUnknownKeyTTL: time.Millisecond})
	assert.NilError(t, err)
	claims := jwt.Claims{Issuer: iss, Subject: "alice", Audience: jwt.Audience{"lancecat"},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	_, err = v.VerifyToken(context.Background(), signToken(t, other, "k2", claims))
	assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
	time.Sleep(5 * time.Millisecond)
	_, err = v.VerifyToken(context.Background(), signToken(t, other, "k2", claims))
	assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
	assert.Equal(t, j.fetches.Load(), int64(2), "past the interval an unknown id is asked about again")
}

// TestOIDCRefusalNamesNoExpectation: a token with the wrong audience or issuer used to be refused
// with "expected audience \"lancecat\" got …" — telling an unauthenticated caller what to forge.
// The answer is now generic; the reason stays in the error's cause for the server log.
func TestOIDCRefusalNamesNoExpectation(t *testing.T) {
	j := newCountingJWKS(t)
	const iss = "https://idp.example/realm-secret"
	const aud = "lancecat-audience-secret"
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: iss, Audience: aud, JWKSURL: j.srv.URL})
	assert.NilError(t, err)
	good := jwt.Claims{Issuer: iss, Subject: "alice", Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}
	for _, tc := range []struct {
		name   string
		mutate func(*jwt.Claims)
		reason string
	}{
		{"wrong audience", func(c *jwt.Claims) { c.Audience = jwt.Audience{"other"} }, aud},
		{"wrong issuer", func(c *jwt.Claims) { c.Issuer = "https://elsewhere.example" }, iss},
		{"expired", func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour)) }, "expired"},
		{"no subject", func(c *jwt.Claims) { c.Subject = "" }, "subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mutate(&c)
			_, err := v.VerifyToken(context.Background(), signToken(t, j.key, "k1", c))
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
			p := nserr.ProblemFor(err, "/v1/namespace/list", "rid")
			for _, secret := range []string{iss, aud, "expected"} {
				assert.Assert(t, !strings.Contains(p.Detail, secret), "the answer names %q: %s", secret, p.Detail)
			}
			assert.Equal(t, p.Detail, "bearer token not accepted")
			cause := errors.Unwrap(err)
			assert.Assert(t, cause != nil && strings.Contains(cause.Error(), tc.reason), "the log reason: %v", cause)
		})
	}
}
