package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// VendConfig is credential vending: short-lived S3 credentials scoped to one table's prefix,
// minted with STS AssumeRole and a session policy, handed out in storage_options by
// describe_table, declare_table and create_table (catalog/governed/vend.go, app/storage_options.go).
type VendConfig struct {
	// Credentials turns vending on (--vend-credentials). Off: storage_options carry only the
	// connection hints (or, with --vend-static-credentials, the server's own keys).
	Credentials bool
	// Duration is the lifetime of a vended credential (STS accepts 15 min to 12 h).
	Duration time.Duration
	// RoleARN is the role AssumeRole assumes: required by AWS STS, ignored by MinIO (the vended
	// credential there inherits the calling user's policy, narrowed by the session policy).
	RoleARN string
	// STSEndpoint is the STS URL; empty: the S3 endpoint (MinIO serves STS there) or, on AWS,
	// https://sts.<region>.amazonaws.com.
	STSEndpoint string
	// AccessKey and SecretKey are the identity that calls AssumeRole; empty: the server's
	// --s3-access-key/--s3-secret-key. A separate identity lets the vending identity reach only
	// the table buckets, never the control root.
	AccessKey string
	SecretKey string
}

// DefaultVendDuration is how long a vended credential lives unless configured.
const DefaultVendDuration = time.Hour

func (v *VendConfig) bindFlags(b binder) {
	if v.Duration == 0 {
		v.Duration = DefaultVendDuration
	}
	b.boolean(&v.Credentials, "vend-credentials", "LANCECAT_VEND_CREDENTIALS",
		"hand each caller of describe/declare/create_table short-lived S3 credentials (STS AssumeRole with a session policy) scoped to that table's prefix: read-only for a caller who may only read its data, read-write for one who may write it")
	b.duration(&v.Duration, "vend-duration", "LANCECAT_VEND_DURATION", "lifetime of a vended credential, 15m to 12h")
	b.str(&v.RoleARN, "vend-role-arn", "LANCECAT_VEND_ROLE_ARN", "IAM role AssumeRole assumes to vend credentials (required on AWS; MinIO ignores it)")
	b.str(&v.STSEndpoint, "vend-sts-endpoint", "LANCECAT_VEND_STS_ENDPOINT", "STS endpoint URL for vending (default: the S3 endpoint, or AWS's regional STS)")
	b.str(&v.AccessKey, "vend-sts-access-key", "LANCECAT_VEND_STS_ACCESS_KEY", "access key that calls STS AssumeRole (default: --s3-access-key)")
	b.str(&v.SecretKey, "vend-sts-secret-key", "LANCECAT_VEND_STS_SECRET_KEY", "secret key that calls STS AssumeRole (default: --s3-secret-key)")
}

// validateVend checks the vending settings against the S3 ones.
func (c Config) validateVend() error {
	v := c.Vend
	if !v.Credentials {
		return nil
	}
	if c.VendStaticCredentials {
		return fmt.Errorf("--vend-credentials and --vend-static-credentials exclude each other: choose scoped, expiring credentials or the server's own keys")
	}
	if v.Duration < storage.MinVendDuration || v.Duration > storage.MaxVendDuration {
		return fmt.Errorf("--vend-duration %s: STS accepts %s to %s", v.Duration, storage.MinVendDuration, storage.MaxVendDuration)
	}
	if ak, sk := c.vendKeys(); ak == "" || sk == "" {
		return fmt.Errorf("--vend-credentials needs a static key to call STS AssumeRole with: --vend-sts-access-key/--vend-sts-secret-key or --s3-access-key/--s3-secret-key")
	}
	if c.S3Endpoint == "" && v.STSEndpoint == "" && v.RoleARN == "" {
		return fmt.Errorf("--vend-credentials on AWS needs --vend-role-arn (AWS STS assumes a role; MinIO does not)")
	}
	return nil
}

// vendKeys is the identity that calls AssumeRole.
func (c Config) vendKeys() (string, string) {
	if c.Vend.AccessKey != "" {
		return c.Vend.AccessKey, c.Vend.SecretKey
	}
	return c.S3AccessKey, c.S3SecretKey
}

// stsEndpoint is the STS URL vending calls.
func (c Config) stsEndpoint() string {
	scheme := "https://"
	if c.S3AllowHTTP {
		scheme = "http://"
	}
	switch {
	case c.Vend.STSEndpoint != "":
		if strings.Contains(c.Vend.STSEndpoint, "://") {
			return c.Vend.STSEndpoint
		}
		return scheme + c.Vend.STSEndpoint
	case c.S3Endpoint != "":
		if strings.Contains(c.S3Endpoint, "://") {
			return c.S3Endpoint
		}
		return scheme + c.S3Endpoint
	}
	return "https://sts." + c.S3Region + ".amazonaws.com"
}

// vendor is the storage.Vendor of these settings; nil when vending is off.
func (c Config) vendor() (*storage.Vendor, error) {
	if !c.Vend.Credentials {
		return nil, nil
	}
	ak, sk := c.vendKeys()
	return storage.NewVendor(storage.VendConfig{Endpoint: c.stsEndpoint(), Region: c.S3Region, AccessKey: ak, SecretKey: sk,
		RoleARN: c.Vend.RoleARN, Duration: c.Vend.Duration})
}
