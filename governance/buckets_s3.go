package governance

import (
	"context"
	"errors"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

// Ensure makes the bucket. One that already exists is adopted only while it is empty (nothing in
// it the warehouse did not write); a bucket holding objects, or another account's, is refused.
func (b S3Buckets) Ensure(ctx context.Context, name string) (bool, error) {
	made, err := storage.EnsureS3Bucket(ctx, b.Config, name)
	switch {
	case errors.Is(err, storage.ErrBucketTaken):
		return false, errBucketUnavailable(name)
	case err != nil:
		return false, nserr.ServiceUnavailablef("creating the warehouse bucket failed: %w", err)
	case made:
		return true, nil
	}
	empty, err := storage.S3BucketEmpty(ctx, b.Config, name)
	if err != nil {
		return false, nserr.ServiceUnavailablef("checking the existing warehouse bucket failed: %w", err)
	}
	if !empty {
		return false, errBucketUnavailable(name)
	}
	return false, nil
}

// Release removes the bucket if it is empty (S3 refuses to remove one that is not).
func (b S3Buckets) Release(ctx context.Context, name string) error {
	return storage.RemoveEmptyS3Bucket(ctx, b.Config, name)
}

func (b S3Buckets) Purge(ctx context.Context, name string) (int64, error) {
	n, err := storage.PurgeS3Bucket(ctx, b.Config, name, func(bucket storage.Bucket) (int64, error) {
		return purgeObjects(ctx, bucket)
	})
	if err != nil {
		var coded *nserr.Error
		if errors.As(err, &coded) {
			return n, err // purgeObjects' own answer
		}
		return n, nserr.ServiceUnavailablef("purging the warehouse bucket failed: %w", err)
	}
	return n, nil
}
