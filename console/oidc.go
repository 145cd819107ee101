package console

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/lancecat/lancecat/gen/controlapi"
)

// OIDCOptions turn on "Sign in with <issuer>": the OpenID Connect authorization-code flow with
// PKCE (RFC 7636, S256), the console being the client. The ID token the issuer answers with is
// the session's bearer credential, so it must pass the server's own bearer verification (the
// --oidc-issuer/--oidc-audience of authz/oidc.go) like any client's token: the issuer here is
// that issuer, and the server's audience must be one of the ID token's audiences, which is the
// client id unless the issuer is told to add more.
type OIDCOptions struct {
	// Issuer is the server's --oidc-issuer; its discovery document names the authorization and
	// token endpoints.
	Issuer string
	// ClientID (and ClientSecret, for a confidential client; empty for a public one, PKCE alone)
	// are what the issuer registered the console as.
	ClientID, ClientSecret string
	// RedirectURL is <console URL>/oidc/callback as registered at the issuer; empty: derived from
	// each request's host (fine directly on a listener; behind a TLS-terminating proxy, set it).
	RedirectURL string
	// Scopes asked for (default "openid").
	Scopes []string
	// HTTPClient talks to the issuer (default: a client with a 10s timeout).
	HTTPClient *http.Client
	// Now is the clock the session's expiry is read against (default time.Now).
	Now func() time.Time
}

const (
	// flowCookie carries one sign-in's state, nonce and PKCE verifier from /oidc/login to
	// /oidc/callback. SameSite=Lax, not Strict: the callback is a top-level navigation from the
	// issuer's site, which a Strict cookie would not come back on.
	flowCookie = "lancecat_console_oidc"
	// flowTTL bounds how long a sign-in may take at the issuer.
	flowTTL = 10 * time.Minute
)

// oidcFlow is the console's side of the authorization-code flow.
type oidcFlow struct {
	opts OIDCOptions

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use, kept once it worked
}

func newOIDCFlow(o OIDCOptions) *oidcFlow {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.Scopes) == 0 {
		o.Scopes = []string{oidc.ScopeOpenID}
	}
	return &oidcFlow{opts: o}
}

// name is how the sign-in button names the issuer: its host.
func (f *oidcFlow) name() string {
	if u, err := url.Parse(f.opts.Issuer); err == nil && u.Host != "" {
		return u.Host
	}
	return f.opts.Issuer
}

// discover reads the issuer's discovery document (go-oidc), once it answers; a failure is asked
// again on the next sign-in, which a person starts, so there is no flood to bound.
func (f *oidcFlow) discover(ctx context.Context) (*oidc.Provider, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.provider != nil {
		return f.provider, nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(dctx, f.opts.HTTPClient), f.opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("console: OIDC discovery at %s: %w", f.opts.Issuer, err)
	}
	f.provider = p
	return p, nil
}

// config is the oauth2 client (golang.org/x/oauth2: the code exchange and the PKCE helpers).
func (f *oidcFlow) config(p *oidc.Provider, r *http.Request) *oauth2.Config {
	redirect := f.opts.RedirectURL
	if redirect == "" {
		scheme := "http"
		if isHTTPS(r) {
			scheme = "https"
		}
		redirect = scheme + "://" + r.Host + Prefix + "/oidc/callback"
	}
	return &oauth2.Config{ClientID: f.opts.ClientID, ClientSecret: f.opts.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: f.opts.Scopes}
}

// flow is one sign-in in progress, as kept in flowCookie.
type flow struct {
	state, nonce, verifier, next string
}

// encode is the cookie value: four base64url fields joined by '.', so no field can spill into
// another.
func (fl flow) encode() string {
	enc := base64.RawURLEncoding.EncodeToString
	return strings.Join([]string{enc([]byte(fl.state)), enc([]byte(fl.nonce)), enc([]byte(fl.verifier)), enc([]byte(fl.next))}, ".")
}

// parseFlow reads a flowCookie value; anything malformed or with an empty field is no flow.
func parseFlow(v string) (flow, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 4 {
		return flow{}, false
	}
	var dec [4]string
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			return flow{}, false
		}
		dec[i] = string(b)
	}
	fl := flow{state: dec[0], nonce: dec[1], verifier: dec[2], next: localNext(dec[3])}
	if fl.state == "" || fl.nonce == "" || fl.verifier == "" {
		return flow{}, false
	}
	return fl, true
}

func setFlowCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: flowCookie, Value: value, Path: Prefix + "/oidc", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r),
	})
}

// oidcLogin starts a sign-in: fresh state, nonce and PKCE verifier, kept in this browser's
// flowCookie, and off to the issuer's authorization endpoint with the state, the nonce and the
// verifier's S256 challenge. Nothing is kept on the server, so any replica finishes the flow.
func (c *Console) oidcLogin(w http.ResponseWriter, r *http.Request) {
	f := c.oidc
	p, err := f.discover(r.Context())
	if err != nil {
		c.log.Warn("console: OIDC sign-in", "error", err.Error())
		c.loginRefused(w, http.StatusServiceUnavailable, "the sign-in issuer cannot be reached right now; try again, or sign in with an API key")
		return
	}
	fl := flow{state: randomToken(), nonce: randomToken(), verifier: oauth2.GenerateVerifier(),
		next: localNext(r.URL.Query().Get("next"))}
	setFlowCookie(w, r, fl.encode(), int(flowTTL/time.Second))
	target := f.config(p, r).AuthCodeURL(fl.state, oidc.Nonce(fl.nonce), oauth2.S256ChallengeOption(fl.verifier))
	http.Redirect(w, r, target, http.StatusFound)
}

// oidcCallback finishes a sign-in. In order: the flow cookie must be there (it is one-use:
// cleared first, so a replayed callback finds none) and its state must match the one the issuer
// sent back (a callback this browser did not start is refused); the code is exchanged with the
// PKCE verifier; the ID token must be signed by the issuer for this client and carry this
// flow's nonce; and, as the session's credential, it must be accepted by the server itself
// (GET /v1/me with it, the same authentication as any door). Only then is there a session.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request) {
	f := c.oidc
	q := r.URL.Query()
	ck, err := r.Cookie(flowCookie)
	setFlowCookie(w, r, "", -1)
	var fl flow
	ok := err == nil
	if ok {
		fl, ok = parseFlow(ck.Value)
	}
	if !ok {
		c.loginRefused(w, http.StatusBadRequest, "this sign-in was not started here, took too long, or was already used: sign in again")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := "the issuer did not sign you in: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		c.loginRefused(w, http.StatusUnauthorized, msg)
		return
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(fl.state)) != 1 {
		c.loginRefused(w, http.StatusBadRequest, "the sign-in's state does not match the one this browser started: sign in again")
		return
	}
	code := q.Get("code")
	if code == "" {
		c.loginRefused(w, http.StatusBadRequest, "the issuer sent no sign-in code: sign in again")
		return
	}
	p, err := f.discover(r.Context())
	if err != nil {
		c.log.Warn("console: OIDC sign-in", "error", err.Error())
		c.loginRefused(w, http.StatusServiceUnavailable, "the sign-in issuer cannot be reached right now; try again")
		return
	}
	ctx := oidc.ClientContext(r.Context(), f.opts.HTTPClient)
	tok, err := f.config(p, r).Exchange(ctx, code, oauth2.VerifierOption(fl.verifier))
	if err != nil {
		c.log.Info("console: OIDC code exchange refused", "error", err.Error())
		msg := "the issuer did not accept the sign-in code (it may have been used already or expired): sign in again"
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) {
			msg = "the issuer's token endpoint cannot be reached right now; try again"
		}
		c.loginRefused(w, http.StatusUnauthorized, msg)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		c.loginRefused(w, http.StatusUnauthorized, "the issuer answered without an ID token (is the \"openid\" scope asked for?)")
		return
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: f.opts.ClientID, Now: f.opts.Now}).Verify(ctx, raw)
	if err != nil {
		c.log.Info("console: OIDC ID token refused", "error", err.Error())
		c.loginRefused(w, http.StatusUnauthorized, "the issuer's ID token was not accepted (signature, audience or expiry): sign in again")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(fl.nonce)) != 1 {
		c.loginRefused(w, http.StatusUnauthorized, "the ID token was not issued for this sign-in (nonce mismatch): sign in again")
		return
	}
	value := "o:" + strconv.FormatInt(idt.Expiry.Unix(), 10) + ":" + raw
	s, _ := parseSession(value)
	var me controlapi.Me
	if err := c.callJSON(r.Context(), r, s, http.MethodGet, "/v1/me", nil, &me); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			c.loginRefused(w, http.StatusUnauthorized, "the catalog does not accept this issuer's ID tokens: its --oidc-issuer must be this issuer and its --oidc-audience one of the token's audiences (usually the console's client id)")
			return
		}
		c.loginRefused(w, http.StatusBadGateway, c.errText(err))
		return
	}
	maxAge := int(idt.Expiry.Sub(f.opts.Now()) / time.Second)
	if maxAge <= 0 {
		c.loginRefused(w, http.StatusUnauthorized, "the ID token has already expired: sign in again")
		return
	}
	setSessionCookie(w, r, value, maxAge)
	// A page that moves on, not a redirect: this request arrived by way of the issuer's site, and
	// browsers do not send a SameSite=Strict cookie along a redirect chain that began elsewhere;
	// a navigation this page starts is same-site.
	c.render(w, "signedin", signedInData{base: base{Title: "Signed in"}, Principal: me.Principal, Next: fl.next})
}

type signedInData struct {
	base
	Principal, Next string
}

// loginRefused is the sign-in page with why, and no session.
func (c *Console) loginRefused(w http.ResponseWriter, status int, msg string) {
	w.WriteHeader(status)
	c.render(w, "login", c.loginData(Prefix+"/", msg))
}

// expired reports whether the session's credential has a known expiry that has passed (an OIDC
// session: the ID token's exp).
func (c *Console) expired(s session) bool {
	if s.expires == 0 {
		return false
	}
	now := time.Now
	if c.oidc != nil {
		now = c.oidc.opts.Now
	}
	return now().Unix() >= s.expires
}
