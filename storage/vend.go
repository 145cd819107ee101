package storage

// Credential vending: short-lived S3 credentials scoped to one table's prefix, minted with STS
// AssumeRole and an inline session policy. The session policy can only narrow what the calling
// identity (or the role it assumes) may do, so a vended credential never reaches further than
// the policy below, whatever the server itself may reach.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Access is what a vended credential may do inside its table's prefix.
type Access int

const (
	// AccessRead lists and reads the table's objects.
	AccessRead Access = iota + 1
	// AccessReadWrite also writes and deletes them (a Lance writer commits, compacts and cleans
	// up inside the table's directory).
	AccessReadWrite
)

func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// ErrUnscopable: a location no session policy can confine a credential to (not an s3:// table
// prefix, or a name IAM would read as a wildcard or variable). Vending there is refused, never
// widened.
var ErrUnscopable = errors.New("storage: no credential can be scoped to this location")

// STS duration bounds: AWS STS and MinIO refuse AssumeRole durations outside them.
const (
	MinVendDuration = 15 * time.Minute
	MaxVendDuration = 12 * time.Hour
)

// VendConfig says how to mint vended credentials.
type VendConfig struct {
	// Endpoint is the STS endpoint URL (with scheme). For MinIO it is the S3 endpoint itself;
	// for AWS, https://sts.amazonaws.com or a regional one.
	Endpoint string
	// Region signs the AssumeRole request (AWS regional STS needs it; MinIO its own region).
	Region string
	// AccessKey and SecretKey are the long-lived identity that calls AssumeRole. On MinIO the
	// vended credential inherits this user's policy, narrowed by the session policy.
	AccessKey string
	SecretKey string
	// RoleARN is the role to assume (required by AWS STS; MinIO ignores it for AssumeRole).
	RoleARN string
	// Duration is how long a vended credential lives (MinVendDuration..MaxVendDuration).
	Duration time.Duration
	// Client is the HTTP client for STS calls (nil: a client with a 30 s timeout).
	Client *http.Client
	// Now is the clock (nil: time.Now); tests move it to exercise the cache.
	Now func() time.Time
}

// VendedCredentials are one STS session's keys and when they stop working.
type VendedCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expires         time.Time
}

// Vendor mints table-scoped credentials and reuses one while it has more than half its life left,
// so a burst of describes of one table costs one STS call, and a client handed a cached credential
// still has at least Duration/2 before it must refresh. Credentials are cached per (bucket,
// prefix, access): two callers sharing an entry may do exactly the same things.
type Vendor struct {
	cfg VendConfig

	mu    sync.Mutex
	cache map[vendKey]VendedCredentials
}

type vendKey struct {
	bucket, prefix string
	access         Access
}

// vendCacheMax bounds the cache: past it, expired and half-spent entries are dropped first, and
// if it is still full the new credential is simply not cached.
const vendCacheMax = 4096

// NewVendor checks cfg and returns a Vendor. Nothing is called until the first Vend.
func NewVendor(cfg VendConfig) (*Vendor, error) {
	switch {
	case cfg.AccessKey == "" || cfg.SecretKey == "":
		return nil, errors.New("storage: credential vending needs a static access key and secret to call STS AssumeRole with")
	case cfg.Duration < MinVendDuration || cfg.Duration > MaxVendDuration:
		return nil, fmt.Errorf("storage: vended credential duration %s is outside STS's %s..%s", cfg.Duration, MinVendDuration, MaxVendDuration)
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("storage: STS endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Vendor{cfg: cfg, cache: map[vendKey]VendedCredentials{}}, nil
}

// Duration is how long freshly minted credentials live.
func (v *Vendor) Duration() time.Duration { return v.cfg.Duration }

// Vend returns credentials that may do access on the objects under uri (s3://bucket/prefix, a
// table's directory) and nothing else.
func (v *Vendor) Vend(ctx context.Context, uri string, access Access) (VendedCredentials, error) {
	bucket, prefix, err := splitS3URI(uri)
	if err != nil {
		return VendedCredentials{}, err
	}
	key := vendKey{bucket, prefix, access}
	now := v.cfg.Now()
	v.mu.Lock()
	c, ok := v.cache[key]
	v.mu.Unlock()
	if ok && c.Expires.Sub(now) > v.cfg.Duration/2 {
		return c, nil
	}
	policy, err := SessionPolicy(bucket, prefix, access)
	if err != nil {
		return VendedCredentials{}, err
	}
	sts := &credentials.STSAssumeRole{
		Client:      v.cfg.Client,
		STSEndpoint: v.cfg.Endpoint,
		Options: credentials.STSAssumeRoleOptions{
			AccessKey: v.cfg.AccessKey, SecretKey: v.cfg.SecretKey,
			Policy: policy, Location: v.cfg.Region,
			DurationSeconds: int(v.cfg.Duration / time.Second),
			RoleARN:         v.cfg.RoleARN,
			// AWS requires a session name when a role is assumed; it shows up in CloudTrail.
			RoleSessionName: "lancecat-vend",
		},
	}
	val, err := sts.RetrieveWithCredContext(&credentials.CredContext{Context: ctx, Client: v.cfg.Client})
	if err != nil {
		return VendedCredentials{}, fmt.Errorf("storage: STS AssumeRole at %s for %s access to s3://%s/%s: %w",
			v.cfg.Endpoint, access, bucket, prefix, err)
	}
	if val.AccessKeyID == "" || val.SecretAccessKey == "" || val.Expiration.IsZero() {
		return VendedCredentials{}, fmt.Errorf("storage: STS AssumeRole at %s answered no usable credentials (key, secret or expiry missing)", v.cfg.Endpoint)
	}
	c = VendedCredentials{AccessKeyID: val.AccessKeyID, SecretAccessKey: val.SecretAccessKey,
		SessionToken: val.SessionToken, Expires: val.Expiration}
	v.remember(key, c, now)
	return c, nil
}

// remember caches c under key, making room by dropping entries with half their life spent.
func (v *Vendor) remember(key vendKey, c VendedCredentials, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= vendCacheMax {
		for k, e := range v.cache {
			if e.Expires.Sub(now) <= v.cfg.Duration/2 {
				delete(v.cache, k)
			}
		}
		if len(v.cache) >= vendCacheMax {
			return
		}
	}
	v.cache[key] = c
}

// splitS3URI is the bucket and the key prefix (no leading or trailing slash) of s3://bucket/prefix.
func splitS3URI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: credentials are vended only for s3:// locations, not %q", ErrUnscopable, uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%w: %q names no bucket", ErrUnscopable, uri)
	}
	if prefix == "" {
		// A credential for a whole bucket is not a table's credential: refuse rather than widen.
		return "", "", fmt.Errorf("%w: %q is a whole bucket; credentials are vended only for a table's prefix", ErrUnscopable, uri)
	}
	return bucket, prefix, nil
}

// policyDocument and policyStatement are the IAM policy grammar (AWS and MinIO read the same).
type policyDocument struct {
	Version   string            `json:"Version"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []string                       `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// SessionPolicy is the inline policy of a credential for access on the objects under
// s3://bucket/prefix/: listing only with a prefix inside it, reading (and for AccessReadWrite
// writing, deleting and aborting uploads) only objects whose keys start with "prefix/". The
// trailing slash matters: without it a credential for table "t" would also reach "t2".
//
// IAM treats '*' and '?' in resources and StringLike conditions as wildcards and "${" opens a
// policy variable (a lone '$', lancecat's default delimiter in table directories, is literal);
// there is no portable escape (AWS's ${*} is unknown to MinIO), so a prefix holding one is
// refused rather than widened.
func SessionPolicy(bucket, prefix string, access Access) (string, error) {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return "", fmt.Errorf("%w: a session policy needs a non-empty prefix", ErrUnscopable)
	}
	for _, s := range []string{bucket, prefix} {
		// JSON would turn invalid UTF-8 into U+FFFD: a policy for a different name.
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("%w: %q is not valid UTF-8", ErrUnscopable, s)
		}
		if i := strings.IndexAny(s, "*?"); i >= 0 {
			return "", fmt.Errorf("%w: in %q, %q is a wildcard in IAM policies", ErrUnscopable, s, s[i])
		}
		if strings.Contains(s, "${") {
			return "", fmt.Errorf("%w: in %q, \"${\" opens a variable in IAM policies", ErrUnscopable, s)
		}
	}
	objects := "arn:aws:s3:::" + bucket + "/" + prefix + "/*"
	stmts := []policyStatement{
		{
			Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{"arn:aws:s3:::" + bucket},
			Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": {prefix + "/*", prefix + "/"}}},
		},
		{Effect: "Allow", Action: []string{"s3:GetObject"}, Resource: []string{objects}},
	}
	switch access {
	case AccessRead:
	case AccessReadWrite:
		stmts = append(stmts, policyStatement{Effect: "Allow",
			Action:   []string{"s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"},
			Resource: []string{objects}})
	default:
		return "", fmt.Errorf("storage: unknown access %v", access)
	}
	b, err := json.Marshal(policyDocument{Version: "2012-10-17", Statement: stmts})
	if err != nil {
		return "", fmt.Errorf("storage: session policy: %w", err)
	}
	return string(b), nil
}
