package authz_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

// issuer is a local OpenID Connect issuer: discovery document and JWKS, keys we generate.
type issuer struct {
	srv         *httptest.Server
	key         *rsa.PrivateKey
	down        atomic.Bool
	discoveries atomic.Int64 // how often the discovery document was asked for
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	is := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.discoveries.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.srv.URL,
			"jwks_uri":                              is.srv.URL + "/keys",
			"authorization_endpoint":                is.srv.URL + "/auth",
			"token_endpoint":                        is.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"},
		}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

type claims struct {
	jwt.Claims
}

func (is *issuer) token(t *testing.T, key *rsa.PrivateKey, c jwt.Claims) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	assert.NilError(t, err)
	tok, err := jwt.Signed(signer).Claims(claims{c}).Serialize()
	assert.NilError(t, err)
	return tok
}

func TestOIDCVerifier(t *testing.T) {
	is := newIssuer(t)
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: is.srv.URL, Audience: "lancecat"})
	assert.NilError(t, err)
	ctx := context.Background()
	now := time.Now()
	good := jwt.Claims{
		Issuer: is.srv.URL, Subject: "alice", Audience: jwt.Audience{"lancecat"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now),
	}
	p, err := v.VerifyToken(ctx, is.token(t, is.key, good))
	assert.NilError(t, err)
	assert.Equal(t, p, authz.User("alice"))

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	with := func(f func(c *jwt.Claims)) jwt.Claims {
		c := good
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		token string
	}{
		{"expired", is.token(t, is.key, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Minute)) }))},
		{"wrong issuer", is.token(t, is.key, with(func(c *jwt.Claims) { c.Issuer = "https://elsewhere.example" }))},
		{"wrong audience", is.token(t, is.key, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"someone-else"} }))},
		{"no subject", is.token(t, is.key, with(func(c *jwt.Claims) { c.Subject = "" }))},
		{"signed by another key", is.token(t, otherKey, good)},
		{"not a token", "not-a-jwt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.VerifyToken(ctx, tc.token)
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated, "%v", err)
		})
	}

	// A subject that looks like an API key's principal cannot pose as one.
	p, err = v.VerifyToken(ctx, is.token(t, is.key, with(func(c *jwt.Claims) { c.Subject = "apikey-0123" })))
	assert.NilError(t, err)
	assert.Assert(t, p != authz.APIKey("0123"))
}

// TestOIDCIssuerDownIsUnavailableThenRecovers: while the issuer's discovery fails, bearer tokens
// are 503, and 200 concurrent tokens ask the issuer once, not once each (issue 11 item 7: the
// refresh storm, here at discovery, before any key set exists); once the refresh interval has
// passed and the issuer is back, the next token verifies.
func TestOIDCIssuerDownIsUnavailableThenRecovers(t *testing.T) {
	is := newIssuer(t)
	is.down.Store(true)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: is.srv.URL, Audience: "lancecat", Now: clock})
	assert.NilError(t, err)
	tok := is.token(t, is.key, jwt.Claims{
		Issuer: is.srv.URL, Subject: "bob", Audience: jwt.Audience{"lancecat"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)),
	})
	var wg sync.WaitGroup
	var wrongCode atomic.Int64
	for range 200 {
		wg.Go(func() {
			if _, err := v.VerifyToken(context.Background(), tok); nserr.CodeOf(err) != nserr.ServiceUnavailable {
				wrongCode.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, wrongCode.Load(), int64(0), "every token is a 503 while the issuer is down")
	assert.Equal(t, is.discoveries.Load(), int64(1), "one discovery for 200 tokens")

	is.down.Store(false)
	_, err = v.VerifyToken(context.Background(), tok)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "within the interval the failure is remembered")
	assert.Equal(t, is.discoveries.Load(), int64(1))
	mu.Lock()
	now = now.Add(authz.DefaultJWKSMinRefresh)
	mu.Unlock()
	p, err := v.VerifyToken(context.Background(), tok)
	assert.NilError(t, err)
	assert.Equal(t, p, authz.User("bob"))
	assert.Equal(t, is.discoveries.Load(), int64(2))
}

func TestOIDCWithJWKSURL(t *testing.T) {
	is := newIssuer(t)
	is.down.Store(true) // discovery is not used
	v, err := authz.NewOIDC(authz.OIDCConfig{Issuer: is.srv.URL, Audience: "lancecat", JWKSURL: is.srv.URL + "/keys"})
	assert.NilError(t, err)
	p, err := v.VerifyToken(context.Background(), is.token(t, is.key, jwt.Claims{
		Issuer: is.srv.URL, Subject: "carol", Audience: jwt.Audience{"lancecat", "other"},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}))
	assert.NilError(t, err)
	assert.Equal(t, p, authz.User("carol"))

	_, err = authz.NewOIDC(authz.OIDCConfig{Issuer: is.srv.URL})
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
}
