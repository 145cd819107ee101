package storage

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/minio/minio-go/v7"
)

// errConflict is AWS's 409 ConditionalRequestConflict: a conditional write
// raced another write or delete of the same key and S3 refused to order
// them. MinIO has not been seen to send it (racing writers get 412), so
// it stays internal rather than becoming part of the API.
var errConflict = errors.New("storage: conflicting concurrent write")

// s3Err maps an S3 error response onto the package's sentinels. The minio
// error value itself is not wrapped — callers must not come to depend on
// backend types — but its code and message are kept in the text. Errors
// that are not S3 responses (context, network) are wrapped unchanged.
func s3Err(err error) error {
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) {
		return err
	}
	var sentinel error
	switch {
	case resp.Code == "NoSuchBucket":
		// A missing bucket is a deployment problem, not a missing object.
	case resp.Code == "NoSuchKey", resp.StatusCode == http.StatusNotFound:
		sentinel = ErrNotFound
	case resp.Code == "PreconditionFailed", resp.StatusCode == http.StatusPreconditionFailed:
		sentinel = ErrPreconditionFailed
	case resp.Code == "ConditionalRequestConflict":
		sentinel = errConflict
	case resp.Code == "InvalidRange", resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		sentinel = ErrInvalidRange
	}
	msg := fmt.Sprintf("s3 %d %s: %s", resp.StatusCode, resp.Code, resp.Message)
	if sentinel != nil {
		return fmt.Errorf("%w (%s)", sentinel, msg)
	}
	return errors.New(msg)
}

func (s *S3) opErr(op, key string, err error) error {
	return fmt.Errorf("storage: %s %q: %w", op, key, s3Err(err))
}
