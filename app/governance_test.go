package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
)

func TestGovernanceConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*GovernanceConfig)
		err  string
	}{
		{"default", func(*GovernanceConfig) {}, ""},
		{"openfga", func(g *GovernanceConfig) { g.Authz, g.OpenFGAURL = AuthzOpenFGA, "http://x" }, ""},
		{"openfga without url", func(g *GovernanceConfig) { g.Authz = AuthzOpenFGA }, "--openfga-url"},
		{"unknown mode", func(g *GovernanceConfig) { g.Authz = "on" }, "want off or openfga"},
		{"issuer without audience", func(g *GovernanceConfig) { g.OIDCIssuer = "https://idp" }, "go together"},
		{"bad estate admin", func(g *GovernanceConfig) { g.EstateAdmins = "user:a, alice" }, "--estate-admins"},
		{"estate admins", func(g *GovernanceConfig) { g.EstateAdmins = "user:a, user:b," }, ""},
		{"no event buffer", func(g *GovernanceConfig) { g.EventBuffer = 0 }, "--event-buffer"},
		// The allow cache's staleness is bounded by the API-key cache's 30 s.
		{"allow cache", func(g *GovernanceConfig) { g.OpenFGAAllowCacheTTL = 30 * time.Second }, ""},
		{"allow cache past 30s", func(g *GovernanceConfig) { g.OpenFGAAllowCacheTTL = 31 * time.Second }, "--openfga-allow-cache-ttl"},
		{"negative allow cache", func(g *GovernanceConfig) { g.OpenFGAAllowCacheTTL = -time.Second }, "--openfga-allow-cache-ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.edit(&cfg.Governance)
			err := cfg.Validate()
			if tc.err == "" {
				assert.NilError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

func TestGovernanceFlagsAndEnvironment(t *testing.T) {
	cfg := DefaultConfig()
	env := map[string]string{"LANCECAT_AUTHZ": "openfga", "LANCECAT_OPENFGA_URL": "http://fga", "LANCECAT_OIDC_ISSUER": "https://idp",
		"LANCECAT_OPENFGA_ALLOW_CACHE_TTL": "5s"}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	errs := cfg.BindFlags(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	assert.NilError(t, fs.Parse([]string{"--oidc-issuer", "https://flag-idp", "--oidc-audience", "lancecat", "--estate-admins", "user:alice"}))
	assert.NilError(t, errs.Err())
	g := cfg.Governance
	assert.Equal(t, g.Authz, "openfga")
	assert.Equal(t, g.OpenFGAURL, "http://fga")
	assert.Equal(t, g.OpenFGAStore, "lancecat")
	assert.Equal(t, g.OIDCIssuer, "https://flag-idp", "a flag beats the environment")
	assert.Equal(t, g.OIDCAudience, "lancecat")
	assert.Equal(t, g.OpenFGAAllowCacheTTL, 5*time.Second)
	assert.Equal(t, DefaultConfig().Governance.OpenFGAAllowCacheTTL, time.Duration(0), "the allow cache is off by default")
	assert.NilError(t, cfg.Validate())
}

func get(t *testing.T, url, apiKey string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	assert.NilError(t, err)
	if apiKey != "" {
		req.Header.Set("x-api-key", apiKey)
	}
	res, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	assert.NilError(t, err)
	return res.StatusCode, string(body)
}

// TestServeWithOpenFGA runs `serve` with authorization on: the store is ensured at startup, the
// configured estate admin is granted, /readyz asks OpenFGA, anonymous callers get 401 and an API
// key made by the admin command's code path acts as its principal.
func TestServeWithOpenFGA(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "data")
	useOpenFGA(t, &cfg, "lancecat-serve")

	ctx := context.Background()
	bucket, _, err := OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(bucket)).Create(ctx, authz.User("alice"), "")
	assert.NilError(t, err)

	base := runServer(t, cfg)
	status, body := get(t, base+"/readyz", "")
	assert.Equal(t, status, 200, body)
	var ready struct{ Checks map[string]string }
	assert.NilError(t, json.Unmarshal([]byte(body), &ready))
	assert.Equal(t, ready.Checks["openfga"], "ok")

	status, body = get(t, base+"/v1/me", "")
	assert.Equal(t, status, 401, body)
	assert.Assert(t, strings.Contains(body, `"code":16`), body)
	status, body = get(t, base+"/v1/me", key)
	assert.Equal(t, status, 200, body)
	assert.Assert(t, strings.Contains(body, `"estate_admin":true`), body)

	c, err := controlclient.NewClientWithResponses(base, controlclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("x-api-key", key)
		return nil
	}))
	assert.NilError(t, err)
	p, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, p.StatusCode(), p.Body, 200, 0)
	w, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)
	assert.Equal(t, w.JSON200.RootUri, cfg.Root+"-warehouses/w")
}

// TestWarehouseBucketsOnMinIO: on an S3 catalog a warehouse is its own bucket: created on demand,
// the catalog's bucket is reserved, and purge_bucket removes objects and bucket.
func TestWarehouseBucketsOnMinIO(t *testing.T) {
	s3, rootBucket := testenv.S3Bucket(t)
	cfg := DefaultConfig()
	useS3(&cfg, s3, "s3://"+rootBucket+"/catalog")
	base := runServer(t, cfg)
	ctx := context.Background()
	c, err := controlclient.NewClientWithResponses(base)
	assert.NilError(t, err)
	mc, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	assert.NilError(t, err)

	var b [5]byte
	_, _ = rand.Read(b[:])
	whBucket := "lancecat-wh-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { _ = mc.RemoveBucket(ctx, whBucket) })

	_, err = c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	r, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w0", Project: "p", Bucket: &rootBucket})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 400, nserr.InvalidInput, "reserved")
	r, err = c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p", Bucket: &whBucket})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.Equal(t, r.JSON200.RootUri, "s3://"+whBucket)
	ok, err := mc.BucketExists(ctx, whBucket)
	assert.NilError(t, err)
	assert.Assert(t, ok, "the warehouse bucket is created")
	_, err = mc.PutObject(ctx, whBucket, "ns/t.lance/data/0.lance", strings.NewReader("x"), 1, minio.PutObjectOptions{})
	assert.NilError(t, err)

	d, err := c.DeleteWarehouseWithResponse(ctx, "w", &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true)})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, *d.JSON200.ObjectsPurged, int64(1))
	ok, err = mc.BucketExists(ctx, whBucket)
	assert.NilError(t, err)
	assert.Assert(t, !ok, "purge_bucket removes the bucket")
}
