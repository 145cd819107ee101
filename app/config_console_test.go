package app

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestConsoleOIDCConfig: the console's OIDC sign-in only starts where its ID tokens can work (the
// server checks bearer tokens only with authorization on and an issuer), and its settings say
// what is missing; the secret file is read and trimmed.
func TestConsoleOIDCConfig(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	assert.NilError(t, os.WriteFile(secret, []byte("s3cret\n"), 0o600))
	on := func(c *Config) {
		c.Governance.Authz, c.Governance.OpenFGAURL = AuthzOpenFGA, "http://127.0.0.1:1"
		c.Governance.OIDCIssuer, c.Governance.OIDCAudience = "https://id.example.com", "console"
		c.ConsoleOIDC.ClientID = "console"
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "": valid
	}{
		{"off", func(*Config) {}, ""},
		{"on", on, ""},
		{"secret without client", func(c *Config) { c.ConsoleOIDC.ClientSecret = "x" }, "need --console-oidc-client-id"},
		{"no issuer", func(c *Config) { on(c); c.Governance.OIDCIssuer, c.Governance.OIDCAudience = "", "" }, "needs --oidc-issuer"},
		{"authorization off", func(c *Config) { on(c); c.Governance.Authz = AuthzOff }, "needs --authz openfga"},
		{"console off", func(c *Config) { on(c); c.Console = false }, "needs the console"},
		{"two secrets", func(c *Config) { on(c); c.ConsoleOIDC.ClientSecret, c.ConsoleOIDC.ClientSecretFile = "x", secret }, "give one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
	o, err := ConsoleOIDCConfig{ClientID: "console", ClientSecretFile: secret, Scopes: "openid, email profile"}.options("https://id.example.com")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.ClientSecret, "s3cret"))
	assert.Check(t, is.DeepEqual(o.Scopes, []string{"openid", "email", "profile"}))
	_, err = ConsoleOIDCConfig{ClientID: "console", ClientSecretFile: secret + ".missing"}.options("https://id.example.com")
	assert.ErrorContains(t, err, "--console-oidc-client-secret-file")
}
