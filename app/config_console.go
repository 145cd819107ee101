package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/lancecat/lancecat/console"
)

// ConsoleOIDCConfig turns on the console's "Sign in with <issuer>" (console/oidc.go): the
// authorization-code flow with PKCE against the server's own --oidc-issuer, the console being
// the client the issuer registered as ClientID. The ID token it gets is the session's bearer
// credential, checked by the server like any bearer token, so --oidc-audience must be one of
// its audiences: the client id, unless the issuer adds the API's audience to ID tokens.
type ConsoleOIDCConfig struct {
	ClientID         string
	ClientSecret     string
	ClientSecretFile string // read at startup; a secret kept out of the process list and env
	RedirectURL      string // empty: derived from each request's host
	Scopes           string // space- or comma-separated; default "openid"
}

func (c *ConsoleOIDCConfig) bindFlags(b binder) {
	b.str(&c.ClientID, "console-oidc-client-id", "LANCECAT_CONSOLE_OIDC_CLIENT_ID",
		"offer \"Sign in with <issuer>\" in the console as this OIDC client of --oidc-issuer (authorization code + PKCE)")
	b.str(&c.ClientSecret, "console-oidc-client-secret", "LANCECAT_CONSOLE_OIDC_CLIENT_SECRET",
		"the console's OIDC client secret (empty: a public client, PKCE alone)")
	b.str(&c.ClientSecretFile, "console-oidc-client-secret-file", "LANCECAT_CONSOLE_OIDC_CLIENT_SECRET_FILE",
		"read the console's OIDC client secret from this file")
	b.str(&c.RedirectURL, "console-oidc-redirect-url", "LANCECAT_CONSOLE_OIDC_REDIRECT_URL",
		"the callback registered at the issuer, <console URL>/oidc/callback (empty: from each request's host; set it behind a proxy)")
	b.str(&c.Scopes, "console-oidc-scopes", "LANCECAT_CONSOLE_OIDC_SCOPES", "scopes the console asks for, space- or comma-separated (empty: openid)")
}

func (c ConsoleOIDCConfig) validate(cfg Config) error {
	if c.ClientID == "" {
		if c.ClientSecret != "" || c.ClientSecretFile != "" || c.RedirectURL != "" {
			return fmt.Errorf("--console-oidc-client-secret/-file and --console-oidc-redirect-url need --console-oidc-client-id")
		}
		return nil
	}
	if !cfg.Console {
		return fmt.Errorf("--console-oidc-client-id needs the console (--console)")
	}
	if cfg.Governance.OIDCIssuer == "" {
		return fmt.Errorf("--console-oidc-client-id needs --oidc-issuer and --oidc-audience: the console's ID tokens are checked as the server's bearer tokens")
	}
	if cfg.Governance.Authz == AuthzOff {
		return fmt.Errorf("--console-oidc-client-id needs --authz openfga: with authorization off the server checks no bearer token")
	}
	if c.ClientSecret != "" && c.ClientSecretFile != "" {
		return fmt.Errorf("--console-oidc-client-secret and --console-oidc-client-secret-file: give one")
	}
	return nil
}

// options is what the console is given, or nil when OIDC sign-in is off.
func (c ConsoleOIDCConfig) options(issuer string) (*console.OIDCOptions, error) {
	if c.ClientID == "" {
		return nil, nil
	}
	secret := c.ClientSecret
	if c.ClientSecretFile != "" {
		b, err := os.ReadFile(c.ClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--console-oidc-client-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	return &console.OIDCOptions{Issuer: issuer, ClientID: c.ClientID, ClientSecret: secret,
		RedirectURL: c.RedirectURL, Scopes: strings.FieldsFunc(c.Scopes, func(r rune) bool { return r == ' ' || r == ',' })}, nil
}
