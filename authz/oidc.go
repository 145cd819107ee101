package authz

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	nserr "github.com/lancecat/lancecat/errors"
)

// OIDCConfig says which bearer tokens the server accepts.
type OIDCConfig struct {
	// Issuer is the token issuer ("iss"), exactly as the provider spells it; its discovery document
	// (<issuer>/.well-known/openid-configuration) names the JWKS.
	Issuer string
	// Audience must be one of the token's "aud" values.
	Audience string
	// JWKSURL, if set, skips discovery and reads the signing keys from this URL.
	JWKSURL string
	// HTTPClient fetches the discovery document and the keys (default: a client with a 10s timeout).
	HTTPClient *http.Client
	// Algorithms the signature may use (default: what discovery lists, else RS256).
	Algorithms []string
	// Now is the clock expiry is checked against (default time.Now).
	Now func() time.Time
	// JWKSMinRefresh is the least time between two fetches of the keys (default
	// DefaultJWKSMinRefresh); JWKSUnknownKeyTTL how long a key id the issuer did not hold is
	// refused without asking again (default DefaultJWKSUnknownKeyTTL). Tokens naming unknown keys
	// thus cost the issuer at most one fetch per JWKSMinRefresh, however many arrive.
	JWKSMinRefresh    time.Duration
	JWKSUnknownKeyTTL time.Duration
}

// OIDC verifies bearer tokens against an OpenID Connect issuer: the signature against the issuer's
// JWKS (re-fetched when a token names an unknown key, so key rotation needs no restart; at most
// once per JWKSMinRefresh, oidc_keys.go), the
// issuer, the audience and the expiry. The principal is User(sub).
//
// Discovery is lazy and retried: a server whose issuer is briefly down at startup still starts,
// and answers 503 for bearer tokens until the issuer answers. A failed discovery is retried at
// most once per JWKSMinRefresh: until then every token gets the same 503 without asking the
// issuer again, so a flood of tokens while the issuer is down is no flood of discovery fetches.
type OIDC struct {
	cfg OIDCConfig

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	// The last failed discovery, while no verifier exists: when, and its answer.
	failedAt  time.Time
	failedErr error
}

var _ TokenVerifier = (*OIDC)(nil)

// NewOIDC returns a verifier for cfg; it does not contact the issuer.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	cfg.Issuer = strings.TrimSpace(cfg.Issuer)
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, nserr.InvalidInputf("OIDC needs both an issuer and an audience")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &OIDC{cfg: cfg}, nil
}

// verifierFor returns the token verifier, running discovery the first time it succeeds.
func (o *OIDC) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	if o.failedErr != nil && o.cfg.Now().Sub(o.failedAt) < o.minRefresh() {
		return nil, o.failedErr
	}
	keys := func(url string) oidc.KeySet {
		return newJWKS(url, o.cfg.HTTPClient, o.cfg.Now, o.cfg.JWKSMinRefresh, o.cfg.JWKSUnknownKeyTTL)
	}
	conf := &oidc.Config{ClientID: o.cfg.Audience, SupportedSigningAlgs: o.cfg.Algorithms, Now: o.cfg.Now}
	if o.cfg.JWKSURL != "" {
		o.verifier = oidc.NewVerifier(o.cfg.Issuer, keys(o.cfg.JWKSURL), conf)
		return o.verifier, nil
	}
	v, err := o.discover(ctx, keys, conf)
	if err != nil {
		o.failedAt, o.failedErr = o.cfg.Now(), err
		return nil, err
	}
	o.verifier, o.failedErr = v, nil
	return v, nil
}

// minRefresh is the least time between two asks of the issuer (discovery or keys).
func (o *OIDC) minRefresh() time.Duration {
	if o.cfg.JWKSMinRefresh > 0 {
		return o.cfg.JWKSMinRefresh
	}
	return DefaultJWKSMinRefresh
}

// discover reads the issuer's discovery document and builds the verifier on its key set.
func (o *OIDC) discover(ctx context.Context, keys func(string) oidc.KeySet, conf *oidc.Config) (*oidc.IDTokenVerifier, error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(oidc.ClientContext(dctx, o.cfg.HTTPClient), o.cfg.Issuer)
	if err != nil {
		return nil, nserr.Wrap(nserr.ServiceUnavailable, err, "the OIDC issuer cannot be reached; retry")
	}
	// Our own key set, not the provider's (oidc_keys.go: bounded refreshes).
	var claims struct {
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := provider.Claims(&claims); err != nil || claims.JWKSURI == "" {
		return nil, nserr.ServiceUnavailablef("the OIDC issuer's discovery document names no jwks_uri")
	}
	if len(conf.SupportedSigningAlgs) == 0 {
		conf.SupportedSigningAlgs = claims.Algs
	}
	return oidc.NewVerifier(o.cfg.Issuer, keys(claims.JWKSURI), conf), nil
}

// errTokenRefused is all a caller learns of a refused bearer token.
const errTokenRefused = "bearer token not accepted"

// VerifyToken checks token and returns User(sub).
func (o *OIDC) VerifyToken(ctx context.Context, token string) (Principal, error) {
	v, err := o.verifierFor(ctx)
	if err != nil {
		return "", err
	}
	tok, err := v.Verify(ctx, token)
	if err != nil {
		if strings.Contains(err.Error(), "fetching keys") {
			// The JWKS did not answer: we cannot tell a good token from a bad one.
			return "", nserr.Wrap(nserr.ServiceUnavailable, err, "the OIDC issuer's keys cannot be fetched; retry")
		}
		// The reason (a wrong audience or issuer names the expected one) is the cause, for the
		// server's log; the caller learns only that the token was refused.
		return "", nserr.Wrap(nserr.Unauthenticated, err, errTokenRefused)
	}
	if tok.Subject == "" {
		return "", nserr.Wrap(nserr.Unauthenticated, errors.New("the token has no subject"), errTokenRefused)
	}
	return User(tok.Subject), nil
}
