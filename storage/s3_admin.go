package storage

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
)

// Whole-bucket administration is not part of Bucket (one bucket's key space); warehouses need it
// to provision and purge their own buckets, with the same client settings as everything else.

// ErrBucketTaken: the bucket name exists and belongs to another account.
var ErrBucketTaken = fmt.Errorf("storage: bucket name is taken by another owner: %w", ErrExists)

// EnsureS3Bucket creates bucket name unless it already exists and is ours.
func EnsureS3Bucket(ctx context.Context, cfg S3Config, name string) error {
	c, err := newS3Client(cfg)
	if err != nil {
		return err
	}
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return fmt.Errorf("storage: checking bucket %s: %w", name, err)
	}
	if ok {
		return nil
	}
	region := cfg.Region
	if region == "us-east-1" {
		region = "" // no LocationConstraint in the default region
	}
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: region}); err != nil {
		switch minio.ToErrorResponse(err).Code {
		case "BucketAlreadyOwnedByYou":
			return nil
		case "BucketAlreadyExists":
			return fmt.Errorf("%w: %s", ErrBucketTaken, name)
		}
		return fmt.Errorf("storage: creating bucket %s: %w", name, err)
	}
	return nil
}

// PurgeS3Bucket deletes every object of bucket name, then the bucket, and reports how many objects
// it deleted. A bucket that is already gone purges nothing.
func PurgeS3Bucket(ctx context.Context, cfg S3Config, name string, purge func(Bucket) (int64, error)) (int64, error) {
	c, err := newS3Client(cfg)
	if err != nil {
		return 0, err
	}
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("storage: checking bucket %s: %w", name, err)
	}
	if !ok {
		return 0, nil
	}
	b, err := NewS3(ctx, cfg, name, "")
	if err != nil {
		return 0, err
	}
	n, err := purge(b)
	if err != nil {
		return n, err
	}
	if err := c.RemoveBucket(ctx, name); err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
		return n, fmt.Errorf("storage: removing bucket %s: %w", name, err)
	}
	return n, nil
}
