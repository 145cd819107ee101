package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// bound binds a fresh configuration with env as the environment and parses args as the command
// line; changed answers the flags args set (what cobra's Changed answers in the command).
func bound(t *testing.T, env map[string]string, args ...string) (*Config, *flag.FlagSet, func(string) bool, envLookup) {
	t.Helper()
	cfg := DefaultConfig()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	errs := cfg.BindFlags(fs, lookup)
	assert.NilError(t, errs.Err())
	assert.NilError(t, fs.Parse(args))
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return &cfg, fs, func(n string) bool { return set[n] }, lookup
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lancecat.yaml")
	assert.NilError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// TestConfigFilePrecedence: flag > LANCECAT_* > file > default, setting by setting; nested keys
// join with "-", lists become the comma values the flags take.
func TestConfigFilePrecedence(t *testing.T) {
	file := writeConfig(t, `
listen: 0.0.0.0:9000       # only the file says it
root: /from/file           # the environment beats it
log-level: warn            # the command line beats it
console: false
tls:
  reload-interval: 5m      # tls-reload-interval
s3:
  region: eu-west-1
  path-style: true
estate-admins: [user:ada, user:bob]
max-body-bytes: 1048576
`)
	cfg, fs, changed, env := bound(t, map[string]string{"LANCECAT_ROOT": "/from/env"}, "--log-level", "debug")
	assert.NilError(t, ApplyConfigFile(fs, file, changed, env))
	assert.Check(t, is.Equal(cfg.Listen, "0.0.0.0:9000"))
	assert.Check(t, is.Equal(cfg.Root, "/from/env"))
	assert.Check(t, is.Equal(cfg.LogLevel, "debug"))
	assert.Check(t, is.Equal(cfg.Console, false))
	assert.Check(t, is.Equal(cfg.TLS.ReloadInterval, 5*time.Minute))
	assert.Check(t, is.Equal(cfg.S3Region, "eu-west-1"))
	assert.Check(t, is.Equal(cfg.S3PathStyle, true))
	assert.Check(t, is.Equal(cfg.Governance.EstateAdmins, "user:ada,user:bob"))
	assert.Check(t, is.Equal(cfg.MaxBodyBytes, int64(1048576)))
	// Untouched by anyone: the default.
	assert.Check(t, is.Equal(cfg.Delimiter, DefaultConfig().Delimiter))
	assert.NilError(t, cfg.Validate())
}

// TestConfigFileRefusals: a file that is not exactly right is refused with its line, before
// anything is served; nothing falls back to a default silently.
func TestConfigFileRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"misspelt", "listen: :1\nmaintenence-interval: 1h\n", `:2: unknown setting "maintenence-interval" (did you mean "maintenance-interval"?)`},
		{"unknown nested", "tls:\n  cert: x\n", `:2: unknown setting "tls-cert"`},
		{"bad boolean", "console: maybe\n", `:1: console: parse error`},
		{"bad duration", "shutdown-timeout: soon\n", `:1: shutdown-timeout: parse error`},
		{"twice through nesting", "tls-cert-file: a\ntls:\n  cert-file: b\n", "line 3: tls-cert-file is already set on line 1"},
		{"the file names itself", "config: other.yaml\n", `unknown setting "config"`},
		{"not a mapping", "- listen\n", "must be a mapping"},
		{"two documents", "listen: :1\n---\nlisten: :2\n", "one YAML document expected"},
		{"list with commas", "estate-admins: [\"user:a,user:b\"]\n", "a list holds plain values without commas"},
		{"mapping in a list", "estate-admins: [{a: b}]\n", "a list holds plain values"},
		{"not YAML", "listen: [\n", "did not find expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fs, changed, env := bound(t, nil)
			err := ApplyConfigFile(fs, writeConfig(t, tc.body), changed, env)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, fs, changed, env := bound(t, nil)
		assert.ErrorContains(t, ApplyConfigFile(fs, filepath.Join(t.TempDir(), "nope.yaml"), changed, env), "no such file")
	})
	t.Run("too large", func(t *testing.T) {
		_, fs, changed, env := bound(t, nil)
		big := "# " + strings.Repeat("x", maxConfigFileBytes) + "\n"
		assert.ErrorContains(t, ApplyConfigFile(fs, writeConfig(t, big), changed, env), "larger than")
	})
	t.Run("empty file sets nothing", func(t *testing.T) {
		cfg, fs, changed, env := bound(t, nil)
		assert.NilError(t, ApplyConfigFile(fs, writeConfig(t, "# nothing yet\n"), changed, env))
		assert.DeepEqual(t, *cfg, DefaultConfig())
	})
}

// TestEverySettingFollowsTheNamingRule: the file's keys are the flag names and each flag's
// variable is LANCECAT_<NAME>; the precedence rule relies on it, so a flag that broke it would
// let its file value beat the environment.
func TestEverySettingFollowsTheNamingRule(t *testing.T) {
	_, fs, _, _ := bound(t, nil)
	envOf := regexp.MustCompile(`\(env (LANCECAT_[A-Z0-9_]+)\)`)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		m := envOf.FindStringSubmatch(f.Usage)
		if assert.Check(t, m != nil, "flag --%s names no variable in its usage", f.Name) {
			assert.Check(t, is.Equal(m[1], envName(f.Name)), "flag --%s", f.Name)
		}
	})
	assert.Check(t, n > 60, "every setting is bound (%d)", n)
}

// TestPrintConfig: every setting, secrets masked (every setting that is a secret by its name is
// in the mask list), and the printed file read back gives the same configuration.
func TestPrintConfig(t *testing.T) {
	_, fs, _, _ := bound(t, map[string]string{
		"LANCECAT_S3_SECRET_KEY":  "s3cr3t",
		"LANCECAT_OPENFGA_TOKEN":  "fga-t0ken-xyz",
		"LANCECAT_WEBHOOK_SECRET": "wh-s3cret-xyz",
		"LANCECAT_S3_ACCESS_KEY":  "AKIDEXAMPLE",
		"LANCECAT_DELIMITER":      "null", // a string YAML would read as null
	}, "--listen", "127.0.0.1:7000", "--trusted-proxies", "10.0.0.0/8,192.168.0.1")

	secretName := regexp.MustCompile(`secret|token|password|passphrase|private`)
	fs.VisitAll(func(f *flag.Flag) {
		if secretName.MatchString(f.Name) && !strings.HasSuffix(f.Name, "-file") {
			assert.Check(t, secretSettings[f.Name], "--%s looks like a secret but --print-config would show it", f.Name)
		}
	})
	for n := range secretSettings {
		assert.Check(t, fs.Lookup(n) != nil, "masked setting %s is no flag", n)
	}

	var out bytes.Buffer
	assert.NilError(t, PrintConfig(&out, fs))
	text := out.String()
	for _, secret := range []string{"s3cr3t", "fga-t0ken-xyz", "wh-s3cret-xyz"} {
		assert.Check(t, !strings.Contains(text, secret), "secret %q printed:\n%s", secret, text)
	}
	assert.Check(t, is.Contains(text, `s3-secret-key: "`+Masked+`"`))
	assert.Check(t, is.Contains(text, "s3-access-key: AKIDEXAMPLE"))
	assert.Check(t, is.Contains(text, "listen: 127.0.0.1:7000"))
	assert.Check(t, is.Contains(text, "openfga-store: "), "unset settings are printed too")

	// Read back as it is: the masks are refused, not taken for secrets.
	_, back, changed, env := bound(t, nil)
	assert.ErrorContains(t, ApplyConfigFile(back, writeConfig(t, text), changed, env),
		`openfga-token holds the mask --print-config prints, not the secret: set it in the environment (LANCECAT_OPENFGA_TOKEN)`)

	// Without the masked lines: the same value for every other setting.
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, Masked) {
			kept = append(kept, l)
		}
	}
	_, back, changed, env = bound(t, nil)
	assert.NilError(t, ApplyConfigFile(back, writeConfig(t, strings.Join(kept, "\n")), changed, env))
	fs.VisitAll(func(f *flag.Flag) {
		if secretSettings[f.Name] || f.Name == ConfigFlag {
			return
		}
		assert.Check(t, is.Equal(back.Lookup(f.Name).Value.String(), f.Value.String()), "--%s after a round trip", f.Name)
	})
}
