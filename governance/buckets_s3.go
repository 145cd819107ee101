package governance

import (
	"context"
	"errors"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

func (b S3Buckets) Ensure(ctx context.Context, name string) error {
	err := storage.EnsureS3Bucket(ctx, b.Config, name)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrBucketTaken):
		return nserr.NamespaceAlreadyExistsf("bucket %s exists and belongs to someone else", name)
	}
	return nserr.Wrap(nserr.ServiceUnavailable, err, "creating the warehouse bucket failed")
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
		return n, nserr.Wrap(nserr.ServiceUnavailable, err, "purging the warehouse bucket failed")
	}
	return n, nil
}
