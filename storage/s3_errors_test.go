package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/minio/minio-go/v7"
	"gotest.tools/v3/assert"
)

func TestS3ErrMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   error
		want error // nil: no sentinel may match
	}{
		{"no such key", minio.ErrorResponse{Code: "NoSuchKey", StatusCode: 404}, ErrNotFound},
		{"HEAD 404 has no code", minio.ErrorResponse{StatusCode: 404}, ErrNotFound},
		{"no such bucket", minio.ErrorResponse{Code: "NoSuchBucket", StatusCode: 404}, nil},
		{"precondition", minio.ErrorResponse{Code: "PreconditionFailed", StatusCode: 412}, ErrPreconditionFailed},
		{"range", minio.ErrorResponse{Code: "InvalidRange", StatusCode: 416}, ErrInvalidRange},
		{"aws conflict", minio.ErrorResponse{Code: "ConditionalRequestConflict", StatusCode: 409}, errConflict},
		{"access denied", minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, nil},
		{"wrapped", fmt.Errorf("x: %w", minio.ErrorResponse{Code: "NoSuchKey", StatusCode: 404}), ErrNotFound},
		{"context", context.Canceled, context.Canceled},
	} {
		got := s3Err(tc.in)
		sentinels := []error{ErrNotFound, ErrPreconditionFailed, ErrInvalidRange, ErrExists, errConflict, context.Canceled}
		for _, s := range sentinels {
			assert.Check(t, errors.Is(got, s) == (s == tc.want), "%s: %v is %v", tc.name, got, s)
		}
		var resp minio.ErrorResponse
		assert.Check(t, !errors.As(got, &resp), "%s: minio type leaked", tc.name)
	}
}
