package storage

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says how to reach an S3-compatible service.
type S3Config struct {
	// Endpoint is host[:port], optionally with an http:// or https://
	// scheme (which then overrides Insecure). Empty means AWS S3.
	Endpoint string
	Region   string
	// AccessKey/SecretKey are static credentials. When AccessKey is empty
	// the usual chain is tried: AWS_* env, MINIO_* env, the AWS shared
	// credentials file, then the EC2/ECS instance role.
	AccessKey string
	SecretKey string
	// SessionToken goes with temporary credentials (what the catalog vends: STS, MinIO's
	// AssumeRole); empty for long-lived keys.
	SessionToken string
	// PathStyle forces path-style requests (http://host/bucket/key), which
	// most self-hosted stores need; otherwise the style is auto-detected.
	PathStyle bool
	// Insecure uses plain http.
	Insecure bool

	// Telemetry, when set, instruments every bucket Open returns, whatever its backend
	// (instrumented.go), and carries the trace context on S3's HTTP requests. It is no setting of
	// the service: the server's process sets it.
	Telemetry *Telemetry
}

// s3PartSize is the part size for uploads of unknown length. minio-go's
// default for unknown sizes is ~537 MiB of buffer per upload; 16 MiB
// parts cap such an object at 160 GiB (10,000 parts), plenty for Lance
// files.
const s3PartSize = 16 << 20

// S3 is a Bucket over a prefix of an S3 bucket.
//
// Conditional writes use S3's If-None-Match: * (PutIfAbsent) and
// If-Match: <etag> (PutIfMatch) headers, which AWS S3 and MinIO enforce
// atomically on the server. They are always sent as one PUT — never
// multipart, whose conditional headers minio-go would drop on completion —
// and never retried by the client: a retry after a lost response would
// report ErrExists/ErrPreconditionFailed for a write that actually
// happened, which a commit protocol must not mistake for losing.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string // "" or ends in "/"
}

var _ Bucket = (*S3)(nil)

// NewS3 opens bucket, scoping all keys under prefix. The bucket must exist.
func NewS3(ctx context.Context, cfg S3Config, bucket, prefix string) (*S3, error) {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("storage: s3 prefix: %w", err)
		}
		prefix += "/"
	}
	client, err := newS3Client(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.SessionToken != "" {
		// Temporary credentials are the catalog's vended ones, scoped to one table's prefix:
		// they may not head the bucket, so the first read or write is what reports a problem.
		return &S3{client: client, bucket: bucket, prefix: prefix}, nil
	}
	ok, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("storage: s3 bucket %q: %w", bucket, s3Err(err))
	}
	if !ok {
		return nil, fmt.Errorf("storage: s3 bucket %q does not exist", bucket)
	}
	return &S3{client: client, bucket: bucket, prefix: prefix}, nil
}

// newS3Client builds the minio-go client for cfg.
func newS3Client(cfg S3Config) (*minio.Client, error) {
	endpoint, secure := cfg.Endpoint, !cfg.Insecure
	switch {
	case strings.HasPrefix(endpoint, "http://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "http://"), false
	case strings.HasPrefix(endpoint, "https://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "https://"), true
	case endpoint == "":
		endpoint = "s3.amazonaws.com"
	}
	endpoint = strings.TrimSuffix(endpoint, "/")

	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	if cfg.AccessKey == "" {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.EnvMinio{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		})
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	var transport http.RoundTripper
	if cfg.Telemetry != nil && cfg.Telemetry.tracing.On() {
		base, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, fmt.Errorf("storage: s3 transport: %w", err)
		}
		transport = cfg.Telemetry.transport(base)
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    transport, // nil: minio-go's own
	})
	if err != nil {
		return nil, fmt.Errorf("storage: s3 client for %q: %w", cfg.Endpoint, err)
	}
	return client, nil
}
