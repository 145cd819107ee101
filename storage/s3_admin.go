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

// EnsureS3Bucket creates bucket name unless it already exists and is ours; made reports whether
// this call created it (a bucket that existed before is someone's: the caller decides whether it
// may use it). On AWS's us-east-1, which answers a create of one's own bucket with success, a
// bucket made concurrently by another caller may also report made.
func EnsureS3Bucket(ctx context.Context, cfg S3Config, name string) (made bool, err error) {
	c, err := newS3Client(cfg)
	if err != nil {
		return false, err
	}
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return false, fmt.Errorf("storage: checking bucket %s: %w", name, err)
	}
	if ok {
		return false, nil
	}
	region := cfg.Region
	if region == "us-east-1" {
		region = "" // no LocationConstraint in the default region
	}
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: region}); err != nil {
		switch minio.ToErrorResponse(err).Code {
		case "BucketAlreadyOwnedByYou":
			return false, nil
		case "BucketAlreadyExists":
			return false, fmt.Errorf("%w: %s", ErrBucketTaken, name)
		}
		return false, fmt.Errorf("storage: creating bucket %s: %w", name, err)
	}
	return true, nil
}

// S3BucketEmpty reports whether bucket name holds no object (a missing bucket is empty).
func S3BucketEmpty(ctx context.Context, cfg S3Config, name string) (bool, error) {
	c, err := newS3Client(cfg)
	if err != nil {
		return false, err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing after its first answer
	o, ok := <-c.ListObjects(lctx, name, minio.ListObjectsOptions{Recursive: true, MaxKeys: 1})
	switch {
	case !ok:
		return true, nil
	case o.Err == nil:
		return false, nil
	case minio.ToErrorResponse(o.Err).Code == "NoSuchBucket":
		return true, nil
	}
	return false, fmt.Errorf("storage: listing bucket %s: %w", name, o.Err)
}

// RemoveEmptyS3Bucket removes bucket name if it holds no object; S3 itself refuses to remove a
// bucket that is not empty, so an object written meanwhile is never lost. A missing bucket is
// fine; a bucket that is not empty is ErrExists.
func RemoveEmptyS3Bucket(ctx context.Context, cfg S3Config, name string) error {
	c, err := newS3Client(cfg)
	if err != nil {
		return err
	}
	if err := c.RemoveBucket(ctx, name); err != nil {
		switch minio.ToErrorResponse(err).Code {
		case "NoSuchBucket":
			return nil
		case "BucketNotEmpty":
			return fmt.Errorf("storage: bucket %s is not empty: %w", name, ErrExists)
		}
		return fmt.Errorf("storage: removing bucket %s: %w", name, err)
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
