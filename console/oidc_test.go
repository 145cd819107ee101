package console_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// fakeIssuer is an OpenID Connect issuer for the sign-in flow (fault injection: a real one would
// need a browser login; this one signs in "alice" at once): discovery, JWKS, an authorization
// endpoint that redirects straight back with a code, and a token endpoint that checks the PKCE
// verifier against the challenge and honours each code once, as real issuers do.
type fakeIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
	// base is the issuer's URL when not srv.URL (the browser test names it by another host).
	base string

	mu    sync.Mutex
	codes map[string]grant
	// What the next ID tokens say, for the refusal cases.
	aud   string
	nonce string // "": the one the authorization request carried
}

type grant struct{ nonce, challenge, redirect, clientID string }

func newFakeIssuer(t *testing.T, aud string) *fakeIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	f := &fakeIssuer{key: key, codes: map[string]grant{}, aud: aud}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": f.url(), "jwks_uri": f.url() + "/keys",
			"authorization_endpoint": f.url() + "/auth", "token_endpoint": f.url() + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
			q.Get("state") == "" || q.Get("nonce") == "" || !strings.Contains(q.Get("scope"), "openid") {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := fmt.Sprintf("code-%d", time.Now().UnixNano())
		f.mu.Lock()
		f.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), clientID: q.Get("client_id")}
		f.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		refuse := func(why string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": why})
		}
		f.mu.Lock()
		g, ok := f.codes[r.PostFormValue("code")]
		delete(f.codes, r.PostFormValue("code")) // one use
		aud, nonce := f.aud, f.nonce
		f.mu.Unlock()
		if !ok {
			refuse("unknown or used code")
			return
		}
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			refuse("PKCE verifier does not match")
			return
		}
		if r.PostFormValue("redirect_uri") != g.redirect {
			refuse("redirect_uri differs")
			return
		}
		if nonce == "" {
			nonce = g.nonce
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "opaque", "token_type": "Bearer", "expires_in": 3600,
			"id_token": f.idToken(t, aud, nonce)})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIssuer) url() string {
	if f.base != "" {
		return f.base
	}
	return f.srv.URL
}

func (f *fakeIssuer) idToken(t *testing.T, aud, nonce string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: f.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	assert.NilError(t, err)
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: f.url(), Subject: "alice", Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))}).
		Claims(map[string]any{"nonce": nonce}).Serialize()
	assert.NilError(t, err)
	return tok
}

func (f *fakeIssuer) set(aud, nonce string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aud, f.nonce = aud, nonce
}

// oidcCatalog is a catalog with authorization on, accepting the fake issuer's tokens for
// audience, and the console signing in as clientID.
func oidcCatalog(t *testing.T, f *fakeIssuer, clientID, audience string) *catalog {
	t.Helper()
	fga := testenv.OpenFGA(t)
	return serve(t, func(cfg *app.Config) {
		cfg.Governance.Authz = app.AuthzOpenFGA
		cfg.Governance.OpenFGAURL = fga
		cfg.Governance.OpenFGAStore = fmt.Sprintf("console-oidc-%d", time.Now().UnixNano())
		cfg.Governance.EstateAdmins = "user:alice"
		cfg.Governance.OIDCIssuer, cfg.Governance.OIDCAudience = f.url(), audience
		cfg.ConsoleOIDC.ClientID = clientID
	})
}

// browserish is a client with a real cookie jar (paths, hosts) that does not follow redirects,
// so each hop of the flow is looked at.
func browserish(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	assert.NilError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// startFlow follows the console's sign-in to the issuer and back, and returns the callback
// URL the issuer sent the browser to (not yet visited).
func startFlow(t *testing.T, c *catalog, hc *http.Client) *url.URL {
	t.Helper()
	res, err := hc.Get(c.url + "/console/oidc/login?next=" + url.QueryEscape("/console/warehouses"))
	assert.NilError(t, err)
	res.Body.Close()
	assert.Equal(t, res.StatusCode, http.StatusFound)
	var flow *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "lancecat_console_oidc" {
			flow = ck
		}
	}
	assert.Assert(t, flow != nil)
	assert.Check(t, flow.HttpOnly)
	assert.Check(t, is.Equal(flow.SameSite, http.SameSiteLaxMode))
	auth, err := url.Parse(res.Header.Get("Location"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(auth.Path, "/auth"))
	assert.Check(t, is.Equal(auth.Query().Get("code_challenge_method"), "S256"))
	assert.Check(t, is.Equal(auth.Query().Get("redirect_uri"), c.url+"/console/oidc/callback"))
	res, err = hc.Get(auth.String())
	assert.NilError(t, err)
	res.Body.Close()
	assert.Equal(t, res.StatusCode, http.StatusFound)
	cb, err := url.Parse(res.Header.Get("Location"))
	assert.NilError(t, err)
	return cb
}

// noSession checks the browser has no session: the estate sends it to sign in.
func noSession(t *testing.T, c *catalog, hc *http.Client) {
	t.Helper()
	res, err := hc.Get(c.url + "/console/")
	assert.NilError(t, err)
	res.Body.Close()
	assert.Check(t, is.Equal(res.StatusCode, http.StatusSeeOther))
	assert.Check(t, strings.HasPrefix(res.Header.Get("Location"), "/console/login"))
}

// TestConsoleOIDC signs in through the authorization-code flow against a fake issuer and a real
// catalog (OpenFGA): the happy path ends on the estate as the token's principal; each forged or
// mismatched step is refused with a page that says why, and no session.
func TestConsoleOIDC(t *testing.T) {
	f := newFakeIssuer(t, "lancecat-console")
	c := oidcCatalog(t, f, "lancecat-console", "lancecat-console")
	c.seed(t, c.apiKey(t, "user:alice"))

	hc := browserish(t)
	res, err := hc.Get(c.url + "/console/login")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(body(t, res), "Sign in with "+strings.TrimPrefix(f.srv.URL, "http://")))

	// The happy path: the callback signs in and moves on (a page, not a redirect: oidc.go).
	cb := startFlow(t, c, hc)
	res, err = hc.Get(cb.String())
	assert.NilError(t, err)
	page := body(t, res)
	assert.Equal(t, res.StatusCode, http.StatusOK, page)
	assert.Check(t, is.Contains(page, `<span id="signed-in-as">user:alice</span>`))
	assert.Check(t, is.Contains(page, `url=/console/warehouses`), "back to where sign-in began")
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "lancecat_console" {
			session = ck
		}
	}
	assert.Assert(t, session != nil)
	assert.Check(t, session.HttpOnly)
	assert.Check(t, is.Equal(session.SameSite, http.SameSiteStrictMode))
	assert.Check(t, session.MaxAge > 0 && session.MaxAge <= 3600, "the session ends with the ID token: %d", session.MaxAge)
	res, err = hc.Get(c.url + "/console/")
	assert.NilError(t, err)
	page = body(t, res)
	assert.Equal(t, res.StatusCode, http.StatusOK)
	assert.Check(t, is.Contains(page, `<span id="principal">user:alice</span>`))
	assert.Check(t, is.Contains(page, "analytics"), "alice, an estate admin, sees the estate")

	// Replaying the callback: the flow cookie was used up, so it is refused before the issuer.
	res, err = hc.Get(cb.String())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.StatusCode, http.StatusBadRequest))
	assert.Check(t, is.Contains(body(t, res), "already used"))

	refused := func(name string, status int, want string, tamper func(cb *url.URL, hc *http.Client)) {
		t.Run(name, func(t *testing.T) {
			hc := browserish(t)
			cb := startFlow(t, c, hc)
			tamper(cb, hc)
			res, err := hc.Get(cb.String())
			assert.NilError(t, err)
			page := body(t, res)
			assert.Check(t, is.Equal(res.StatusCode, status), page)
			assert.Check(t, is.Contains(page, want))
			assert.Check(t, is.Contains(page, `id="login-error"`))
			for _, ck := range res.Cookies() {
				assert.Check(t, ck.Name != "lancecat_console" || ck.MaxAge < 0, "no session cookie")
			}
			noSession(t, c, hc)
		})
	}
	refused("wrong state", http.StatusBadRequest, "state does not match", func(cb *url.URL, _ *http.Client) {
		q := cb.Query()
		q.Set("state", "forged")
		cb.RawQuery = q.Encode()
	})
	// A code replayed with the flow cookie it came with (say, copied from another tab): the
	// issuer honours a code once.
	refused("replayed code", http.StatusUnauthorized, "did not accept the sign-in code", func(cb *url.URL, hc *http.Client) {
		u, _ := url.Parse(c.url + "/console/oidc/")
		flowCk := hc.Jar.Cookies(u)
		res, err := hc.Get(cb.String()) // the first use signs in (another tab)
		assert.NilError(t, err)
		res.Body.Close()
		assert.Equal(t, res.StatusCode, http.StatusOK)
		jar, _ := cookiejar.New(nil) // a fresh browser that carries only the old flow cookie
		jar.SetCookies(u, flowCk)
		hc.Jar = jar
	})
	refused("wrong nonce", http.StatusUnauthorized, "nonce mismatch", func(*url.URL, *http.Client) { f.set("lancecat-console", "another-sign-in") })
	refused("another audience", http.StatusUnauthorized, "ID token was not accepted", func(*url.URL, *http.Client) { f.set("some-other-client", "") })
	f.set("lancecat-console", "")
	refused("issuer error", http.StatusUnauthorized, "access_denied", func(cb *url.URL, _ *http.Client) {
		q := cb.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		cb.RawQuery = q.Encode()
	})

	// An expired session goes back to sign in, and the cookie is cleared.
	t.Run("expired", func(t *testing.T) {
		hc := browserish(t)
		u, _ := url.Parse(c.url + "/console/")
		tok := f.idToken(t, "lancecat-console", "n")
		hc.Jar.SetCookies(u, []*http.Cookie{{Name: "lancecat_console", Value: "o:" + strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10) + ":" + tok, Path: "/console"}})
		res, err := hc.Get(c.url + "/console/")
		assert.NilError(t, err)
		res.Body.Close()
		assert.Equal(t, res.StatusCode, http.StatusSeeOther)
		assert.Check(t, is.Contains(res.Header.Get("Location"), "expired=1"))
		res, err = hc.Get(c.url + res.Header.Get("Location"))
		assert.NilError(t, err)
		assert.Check(t, is.Contains(body(t, res), "your sign-in expired"))
	})
}

// TestConsoleOIDCAudience: an ID token the console accepts (its audience is the client id) but
// the server does not (its --oidc-audience is another) makes no session, and the page says
// which settings to line up.
func TestConsoleOIDCAudience(t *testing.T) {
	f := newFakeIssuer(t, "lancecat-console")
	c := oidcCatalog(t, f, "lancecat-console", "lancecat-api")
	hc := browserish(t)
	cb := startFlow(t, c, hc)
	res, err := hc.Get(cb.String())
	assert.NilError(t, err)
	page := body(t, res)
	assert.Check(t, is.Equal(res.StatusCode, http.StatusUnauthorized), page)
	assert.Check(t, is.Contains(page, "--oidc-audience"))
	noSession(t, c, hc)
}
