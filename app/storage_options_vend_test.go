package app

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// vendS3Config serves an S3 (MinIO) root in a fresh bucket with vending on, credentials living
// 20 minutes (STS's floor is 15: the test checks the expiry field rather than waiting it out).
func vendS3Config(t *testing.T) (Config, storage.S3Config, string) {
	s3, bucket := testenv.S3Bucket(t)
	cfg := DefaultConfig()
	cfg.LogLevel = "error"
	useS3(&cfg, s3, "s3://"+bucket+"/catalog")
	cfg.Vend.Credentials, cfg.Vend.Duration = true, 20*time.Minute
	return cfg, s3, bucket
}

// vendCaller posts to the spec doors as one principal.
type vendCaller func(route, contentType string, body []byte) (int, []byte)

func (e *specEnv) vendCaller(t *testing.T, p authz.Principal) vendCaller {
	sign := e.keyFor(t, p)
	return func(route, contentType string, body []byte) (int, []byte) {
		t.Helper()
		return send(t, http.MethodPost, e.url+route, contentType, body, sign)
	}
}

// tableAccess is what a describe/declare answered: where the table is and its storage options.
type tableAccess struct {
	Location string            `json:"location"`
	Options  map[string]string `json:"storage_options"`
}

func (c vendCaller) access(t *testing.T, route, body string) tableAccess {
	t.Helper()
	st, out := c(route, "application/json", []byte(body))
	assert.Equal(t, st, 200, "%s: %s", route, out)
	var a tableAccess
	assert.NilError(t, json.Unmarshal(out, &a))
	return a
}

// vendProbe uses the credentials in a table's storage options against the store.
type vendProbe struct {
	t      *testing.T
	mc     *minio.Client
	bucket string
}

func newVendProbe(t *testing.T, s3 storage.S3Config, bucket string, opts map[string]string) vendProbe {
	t.Helper()
	assert.Assert(t, opts["aws_access_key_id"] != "" && opts["aws_session_token"] != "", "no vended credential: %v", opts)
	assert.Assert(t, opts["aws_access_key_id"] != s3.AccessKey, "the server's own key was handed out")
	mc, err := minio.New(s3.Endpoint, &minio.Options{Region: s3.Region,
		Creds: credentials.NewStaticV4(opts["aws_access_key_id"], opts["aws_secret_access_key"], opts["aws_session_token"])})
	assert.NilError(t, err)
	return vendProbe{t, mc, bucket}
}

// key is the object key of location (s3://bucket/...) plus rest.
func (p vendProbe) key(location, rest string) string {
	k := strings.TrimPrefix(location, "s3://"+p.bucket+"/")
	return strings.TrimSuffix(k, "/") + "/" + rest
}

func (p vendProbe) list(prefix string) ([]string, error) {
	var keys []string
	for o := range p.mc.ListObjects(context.Background(), p.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return keys, o.Err
		}
		keys = append(keys, o.Key)
	}
	return keys, nil
}

func (p vendProbe) get(key string) error {
	o, err := p.mc.GetObject(context.Background(), p.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer o.Close()
	_, err = io.ReadAll(o)
	return err
}

func (p vendProbe) put(key string) error {
	_, err := p.mc.PutObject(context.Background(), p.bucket, key, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
	return err
}

func (p vendProbe) denied(err error, what string) {
	p.t.Helper()
	assert.Assert(p.t, err != nil, "%s: allowed", what)
	assert.Equal(p.t, minio.ToErrorResponse(err).Code, "AccessDenied", "%s: %v", what, err)
}

// readsTable: the credential lists the table's objects and reads one of its manifests.
func (p vendProbe) readsTable(location string) {
	p.t.Helper()
	keys, err := p.list(p.key(location, ""))
	assert.NilError(p.t, err)
	manifest := ""
	for _, k := range keys {
		if strings.HasSuffix(k, ".manifest") {
			manifest = k
		}
	}
	assert.Assert(p.t, manifest != "", "no manifest among %v", keys)
	assert.NilError(p.t, p.get(manifest))
}

// assertExpiry: expires_at_millis is the configured lifetime from now (a minute of slack).
func assertExpiry(t *testing.T, opts map[string]string, start time.Time, d time.Duration) {
	t.Helper()
	ms, err := strconv.ParseInt(opts["expires_at_millis"], 10, 64)
	assert.NilError(t, err, "expires_at_millis: %v", opts)
	exp := time.UnixMilli(ms)
	assert.Assert(t, exp.After(start.Add(d-time.Minute)) && exp.Before(start.Add(d+time.Minute)), "expires at %v, want about %v", exp, start.Add(d))
}

// TestVendedCredentialsPerCaller serves an S3 (MinIO) catalog with --vend-credentials and
// --authz openfga. Each caller's describe answers credentials for what that caller may do, proven
// by using them against MinIO: a reader's credential reads its table and cannot write it or read
// another table; a writer's writes inside its table and not outside; the creator of a declared
// table writes its location. Every credential carries expires_at_millis (the configured lifetime
// from now) and the connection hints; vend_credentials false answers none.
func TestVendedCredentialsPerCaller(t *testing.T) {
	cfg, s3, bucket := vendS3Config(t)
	useOpenFGA(t, &cfg, "lancecat-test")
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	alice, carol, dave := e.vendCaller(t, authz.User("alice")), e.vendCaller(t, authz.User("carol")), e.vendCaller(t, authz.User("dave"))
	const arrowType = "application/vnd.apache.arrow.stream"
	st, body := alice("/v1/namespace/ns/create", "application/json", []byte(`{}`))
	expect(t, st, body, 200, 0)
	for _, tbl := range []string{"a", "b"} {
		st, body = alice("/v1/table/ns$"+tbl+"/create", arrowType, int64Stream(t, 3))
		expect(t, st, body, 200, 0)
	}
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "reader", authz.TableObject([]string{"ns", "a"})))
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("dave").Subject(), "writer", authz.TableObject([]string{"ns", "a"})))
	other := alice.access(t, "/v1/table/ns$b/describe", `{}`).Location
	start := time.Now()

	t.Run("reader", func(t *testing.T) {
		a := carol.access(t, "/v1/table/ns$a/describe", `{}`)
		assertExpiry(t, a.Options, start, cfg.Vend.Duration)
		assert.Equal(t, a.Options["aws_endpoint"], "http://"+s3.Endpoint)
		p := newVendProbe(t, s3, bucket, a.Options)
		p.readsTable(a.Location)
		p.denied(p.put(p.key(a.Location, "_versions/99.manifest")), "reader writes its table")
		p.denied(p.get(p.key(other, "_versions/1.manifest")), "reader reads another table")
		_, err := p.list(p.key(other, ""))
		p.denied(err, "reader lists another table")
		// The 0.38+ SDKs ask explicitly; the answer is the same.
		again := carol.access(t, "/v1/table/ns$a/describe", `{"vend_credentials":true}`)
		assert.Equal(t, again.Options["aws_access_key_id"], a.Options["aws_access_key_id"], "a live credential of the same scope is reused")
	})

	t.Run("writer", func(t *testing.T) {
		a := dave.access(t, "/v1/table/ns$a/describe", `{}`)
		assertExpiry(t, a.Options, start, cfg.Vend.Duration)
		p := newVendProbe(t, s3, bucket, a.Options)
		p.readsTable(a.Location)
		assert.NilError(t, p.put(p.key(a.Location, "data/vended-writer.lance")))
		assert.NilError(t, p.mc.RemoveObject(ctx, bucket, p.key(a.Location, "data/vended-writer.lance"), minio.RemoveObjectOptions{}))
		p.denied(p.put(p.key(other, "data/x.lance")), "writer writes another table")
		p.denied(p.get(p.key(other, "_versions/1.manifest")), "writer reads another table")
		p.denied(p.put(strings.TrimSuffix(p.key(a.Location, ""), "/")+"-sibling/x"), "writer writes beside its table")
	})

	t.Run("declare", func(t *testing.T) {
		d := alice.access(t, "/v1/table/ns$d/declare", `{}`)
		assertExpiry(t, d.Options, start, cfg.Vend.Duration)
		p := newVendProbe(t, s3, bucket, d.Options)
		// The client writes the dataset itself to the declared location.
		assert.NilError(t, p.put(p.key(d.Location, "_versions/1.manifest")))
		p.denied(p.put(p.key(other, "_versions/9.manifest")), "declarer writes another table")
	})

	t.Run("vend_credentials false", func(t *testing.T) {
		a := carol.access(t, "/v1/table/ns$a/describe", `{"vend_credentials":false}`)
		for _, k := range credentialOptionNames {
			_, has := a.Options[k]
			assert.Assert(t, !has, "%s answered: %v", k, a.Options)
		}
		assert.Equal(t, a.Options["aws_endpoint"], "http://"+s3.Endpoint, "the hints stay")
	})
}

// TestVendedCredentialsAuthorizationOff: with authorization off every caller is an estate admin
// (it may write through the API), so describe answers a read-write credential, still confined to
// the one table. Capabilities say vending is on, sts, with its duration.
func TestVendedCredentialsAuthorizationOff(t *testing.T) {
	cfg, s3, bucket := vendS3Config(t)
	e := newSpecEnv(t, cfg)
	anyone := e.vendCaller(t, authz.User("anyone"))
	st, body := anyone("/v1/namespace/ns/create", "application/json", []byte(`{}`))
	expect(t, st, body, 200, 0)
	for _, tbl := range []string{"a", "b"} {
		st, body = anyone("/v1/table/ns$"+tbl+"/create", "application/vnd.apache.arrow.stream", int64Stream(t, 2))
		expect(t, st, body, 200, 0)
		// create_table answers the creator's credential too.
		var created tableAccess
		assert.NilError(t, json.Unmarshal(body, &created))
		assert.Assert(t, created.Options["aws_session_token"] != "", "%s", body)
	}
	other := anyone.access(t, "/v1/table/ns$b/describe", `{}`).Location
	a := anyone.access(t, "/v1/table/ns$a/describe", `{}`)
	assertExpiry(t, a.Options, time.Now(), cfg.Vend.Duration)
	p := newVendProbe(t, s3, bucket, a.Options)
	p.readsTable(a.Location)
	assert.NilError(t, p.put(p.key(a.Location, "data/x.lance")))
	p.denied(p.put(p.key(other, "data/x.lance")), "writes another table")
	p.denied(p.get(p.key(other, "_versions/1.manifest")), "reads another table")

	caps := getCapabilities(t, e.url)
	f := caps.Features
	assert.Assert(t, f.VendedCredentials, "%+v", f)
	assert.Assert(t, f.CredentialVending != nil && f.CredentialVending.Mode == controlapi.VendingSTS, "%+v", f.CredentialVending)
	assert.Equal(t, *f.CredentialVending.DurationSeconds, int64(1200))
	assert.Assert(t, f.CredentialVending.Reason == nil)
}

// TestVendedCredentialsLocalRoot: vending on over a local root answers no credentials (a path has
// nothing to scope) and says so in the capabilities; vending off says clients bring their own.
func TestVendedCredentialsLocalRoot(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(strconv.FormatBool(on), func(t *testing.T) {
			cfg := specConfig(t)
			cfg.Vend.Credentials = on
			cfg.S3AccessKey, cfg.S3SecretKey, cfg.S3Endpoint = "k", "s", "minio:9000" // never called
			e := newSpecEnv(t, cfg)
			anyone := e.vendCaller(t, authz.User("anyone"))
			st, body := anyone("/v1/namespace/ns/create", "application/json", []byte(`{}`))
			expect(t, st, body, 200, 0)
			d := anyone.access(t, "/v1/table/ns$d/declare", `{"vend_credentials":true}`)
			assert.Assert(t, d.Options == nil, "%v", d.Options)
			d = anyone.access(t, "/v1/table/ns$d/describe", `{"vend_credentials":true}`)
			assert.Assert(t, d.Options == nil, "%v", d.Options)
			f := getCapabilities(t, e.url).Features
			assert.Assert(t, f.CredentialVending != nil && f.CredentialVending.Reason != nil, "%+v", f.CredentialVending)
			if on {
				assert.Equal(t, f.CredentialVending.Mode, controlapi.VendingSTS)
				assert.Assert(t, strings.Contains(*f.CredentialVending.Reason, "not in S3"), *f.CredentialVending.Reason)
			} else {
				assert.Equal(t, f.CredentialVending.Mode, controlapi.VendingNone)
				assert.Assert(t, !f.VendedCredentials)
			}
		})
	}
}

func getCapabilities(t *testing.T, url string) controlapi.Capabilities {
	t.Helper()
	resp, err := http.Get(url + "/v1/capabilities")
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	var caps controlapi.Capabilities
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&caps))
	return caps
}

// TestVendConfig: the vending flags and environment, and the settings that cannot work.
func TestVendConfig(t *testing.T) {
	t.Run("flags", func(t *testing.T) {
		cfg := DefaultConfig()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		env := map[string]string{"LANCECAT_VEND_DURATION": "30m", "LANCECAT_VEND_ROLE_ARN": "arn:aws:iam::1:role/r"}
		errs := cfg.BindFlags(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		assert.NilError(t, fs.Parse([]string{"--vend-credentials", "--vend-sts-endpoint", "sts.example:443"}))
		assert.NilError(t, errs.Err())
		assert.DeepEqual(t, cfg.Vend, VendConfig{Credentials: true, Duration: 30 * time.Minute, RoleARN: "arn:aws:iam::1:role/r", STSEndpoint: "sts.example:443"})
		assert.Equal(t, cfg.stsEndpoint(), "https://sts.example:443")
	})
	ok := DefaultConfig()
	ok.S3AccessKey, ok.S3SecretKey, ok.S3Endpoint = "k", "s", "minio:9000"
	ok.Vend.Credentials = true
	assert.NilError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"with the static opt-in", func(c *Config) { c.VendStaticCredentials = true }, "exclude each other"},
		{"too short", func(c *Config) { c.Vend.Duration = 5 * time.Minute }, "STS accepts"},
		{"too long", func(c *Config) { c.Vend.Duration = 24 * time.Hour }, "STS accepts"},
		{"no static key", func(c *Config) { c.S3AccessKey, c.S3SecretKey = "", "" }, "static key"},
		{"AWS without a role", func(c *Config) { c.S3Endpoint = "" }, "--vend-role-arn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			assert.ErrorContains(t, cfg.Validate(), tc.err)
		})
	}
	// Where STS is: the MinIO endpoint itself, else AWS's regional STS.
	assert.Equal(t, ok.stsEndpoint(), "https://minio:9000")
	ok.S3Endpoint, ok.S3Region = "", "eu-west-1"
	assert.Equal(t, ok.stsEndpoint(), "https://sts.eu-west-1.amazonaws.com")
}
