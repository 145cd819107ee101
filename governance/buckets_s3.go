package governance

import (
	"context"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

// Creating and removing buckets is not part of storage.Bucket (which is one bucket's key space),
// so the S3 warehouse provisioner talks to the endpoint itself, with the same settings.

func (b S3Buckets) client() (*minio.Client, error) {
	endpoint, secure := b.Config.Endpoint, !b.Config.Insecure
	switch {
	case strings.HasPrefix(endpoint, "http://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "http://"), false
	case strings.HasPrefix(endpoint, "https://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "https://"), true
	case endpoint == "":
		endpoint = "s3.amazonaws.com"
	}
	creds := credentials.NewStaticV4(b.Config.AccessKey, b.Config.SecretKey, "")
	if b.Config.AccessKey == "" {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
		})
	}
	lookup := minio.BucketLookupAuto
	if b.Config.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(strings.TrimSuffix(endpoint, "/"), &minio.Options{
		Creds: creds, Secure: secure, Region: b.Config.Region, BucketLookup: lookup,
	})
	if err != nil {
		return nil, nserr.Wrap(nserr.ServiceUnavailable, err, "the S3 endpoint is misconfigured")
	}
	return c, nil
}

func (b S3Buckets) Ensure(ctx context.Context, name string) error {
	c, err := b.client()
	if err != nil {
		return err
	}
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return nserr.Wrap(nserr.ServiceUnavailable, err, "checking the warehouse bucket failed")
	}
	if ok {
		return nil
	}
	region := b.Config.Region
	if region == "us-east-1" {
		region = "" // no LocationConstraint in the default region
	}
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: region}); err != nil {
		if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" {
			return nil
		} else if code == "BucketAlreadyExists" {
			return nserr.NamespaceAlreadyExistsf("bucket %s exists and belongs to someone else", name)
		}
		return nserr.Wrap(nserr.ServiceUnavailable, err, "creating the warehouse bucket failed")
	}
	return nil
}

func (b S3Buckets) Purge(ctx context.Context, name string) (int64, error) {
	c, err := b.client()
	if err != nil {
		return 0, err
	}
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return 0, nserr.Wrap(nserr.ServiceUnavailable, err, "checking the warehouse bucket failed")
	}
	if !ok {
		return 0, nil
	}
	bucket, err := storage.NewS3(ctx, b.Config, name, "")
	if err != nil {
		return 0, nserr.Wrap(nserr.ServiceUnavailable, err, "opening the warehouse bucket failed")
	}
	n, err := purgeObjects(ctx, bucket)
	if err != nil {
		return n, err
	}
	if err := c.RemoveBucket(ctx, name); err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
		return n, nserr.Wrap(nserr.ServiceUnavailable, err, "removing the warehouse bucket failed")
	}
	return n, nil
}
