package app

import (
	"flag"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestTransportFlagsAndEnvironment: the body, timeout and proxy settings each have a flag and an
// environment variable (a flag wins), and settings that cannot work are refused at startup.
func TestTransportFlagsAndEnvironment(t *testing.T) {
	cfg := DefaultConfig()
	env := map[string]string{
		"LANCECAT_MAX_JSON_BODY_BYTES": "1024", "LANCECAT_READ_BODY_TIMEOUT": "5s", "LANCECAT_MIN_BODY_RATE": "4096",
		"LANCECAT_IDLE_TIMEOUT": "30s", "LANCECAT_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1",
		"LANCECAT_MAX_BUFFERED_BODY_BYTES": "536870912",
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	errs := cfg.BindFlags(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	assert.NilError(t, fs.Parse([]string{"--read-body-timeout", "7s"}))
	assert.NilError(t, errs.Err())
	tc := cfg.Transport
	assert.Equal(t, tc.MaxJSONBodyBytes, int64(1024))
	assert.Equal(t, tc.MaxBufferedBodyBytes, int64(512<<20))
	assert.Equal(t, tc.ReadBodyTimeout, 7*time.Second, "a flag beats the environment")
	assert.Equal(t, tc.MinBodyRate, int64(4096))
	assert.Equal(t, tc.IdleTimeout, 30*time.Second)
	proxies, err := tc.trustedProxies()
	assert.NilError(t, err)
	assert.Equal(t, len(proxies), 2)
	assert.Equal(t, proxies[1].String(), "192.0.2.1/32")
	assert.NilError(t, cfg.Validate())

	def := DefaultConfig()
	assert.NilError(t, def.Validate())
	p, err := def.Transport.trustedProxies()
	assert.NilError(t, err)
	assert.Equal(t, len(p), 0, "no proxy is trusted by default")

	for _, c := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no json cap", func(c *Config) { c.Transport.MaxJSONBodyBytes = 0 }, "--max-json-body-bytes"},
		{"budget below one body", func(c *Config) { c.Transport.MaxBufferedBodyBytes = c.MaxBodyBytes - 1 }, "--max-buffered-body-bytes"},
		{"no body timeout", func(c *Config) { c.Transport.ReadBodyTimeout = 0 }, "--read-body-timeout"},
		{"no rate", func(c *Config) { c.Transport.MinBodyRate = 0 }, "--min-body-rate"},
		{"no idle timeout", func(c *Config) { c.Transport.IdleTimeout = 0 }, "--idle-timeout"},
		{"bad proxy", func(c *Config) { c.Transport.TrustedProxies = "10.0.0.0/33" }, "--trusted-proxies"},
		{"proxy name", func(c *Config) { c.Transport.TrustedProxies = "proxy.local" }, "--trusted-proxies"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.mutate(&cfg)
			assert.ErrorContains(t, cfg.Validate(), c.want)
		})
	}
}
