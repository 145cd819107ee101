package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
)

func (s *S3) full(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

func s3Info(key string, oi minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: oi.Size, ETag: oi.ETag, ModTime: oi.LastModified}
}

func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	full, err := s.full(key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	// Core.GetObject issues the request now, so a missing key fails here
	// rather than on the first Read as with Client.GetObject.
	rc, oi, _, err := minio.Core{Client: s.client}.GetObject(ctx, s.bucket, full, minio.GetObjectOptions{})
	if err != nil {
		return nil, ObjectInfo{}, s.opErr("get", key, err)
	}
	return rc, s3Info(key, oi), nil
}

func (s *S3) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	full, err := s.full(key)
	if err != nil {
		return nil, err
	}
	switch {
	case offset < 0:
		return nil, fmt.Errorf("%w: %q offset %d is negative", ErrInvalidRange, key, offset)
	case length == 0:
		// HTTP cannot express an empty range; check the object instead.
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if _, err := rangeLen(key, info.Size, offset, 0); err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(nil)), nil
	case offset == 0 && length < 0:
		rc, _, err := s.Get(ctx, key)
		return rc, err
	}
	var opts minio.GetObjectOptions
	end := int64(0) // "bytes=offset-"
	if length > 0 {
		end = offset + length - 1
	}
	if err := opts.SetRange(offset, end); err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrInvalidRange, key, err)
	}
	rc, _, _, err := minio.Core{Client: s.client}.GetObject(ctx, s.bucket, full, opts)
	if err != nil {
		err = s.opErr("get range", key, err)
		// S3 answers 416 for any range of an empty object; our contract
		// serves offset 0 of an empty object as an empty body.
		if offset == 0 && errors.Is(err, ErrInvalidRange) {
			return io.NopCloser(bytes.NewReader(nil)), nil
		}
		return nil, err
	}
	return rc, nil
}

func (s *S3) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	full, err := s.full(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, full, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, s.opErr("stat", key, err)
	}
	return s3Info(key, oi), nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	full, err := s.full(key)
	if err != nil {
		return err
	}
	// S3 deletes are already idempotent: a missing key is a 204.
	if err := s.client.RemoveObject(ctx, s.bucket, full, minio.RemoveObjectOptions{}); err != nil {
		return s.opErr("delete", key, err)
	}
	return nil
}

func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	info, err := s.put(ctx, key, r, size, false, minio.PutObjectOptions{})
	if err != nil {
		return ObjectInfo{}, s.opErr("put", key, err)
	}
	return info, nil
}

func (s *S3) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	if mutantUnconditionalPut {
		return s.Put(ctx, key, r, size)
	}
	var opts minio.PutObjectOptions
	opts.SetMatchETagExcept("*") // If-None-Match: *
	info, err := s.put(ctx, key, r, size, true, opts)
	if err != nil {
		err = s3Err(err)
		if errors.Is(err, ErrPreconditionFailed) {
			return ObjectInfo{}, fmt.Errorf("%w: %q", ErrExists, key)
		}
		return ObjectInfo{}, fmt.Errorf("storage: put if absent %q: %w", key, err)
	}
	return info, nil
}

func (s *S3) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	if err := checkIfMatchETag(key, etag); err != nil {
		return ObjectInfo{}, err
	}
	var opts minio.PutObjectOptions
	opts.SetMatchETag(etag) // If-Match: "etag"
	info, err := s.put(ctx, key, r, size, true, opts)
	if err != nil {
		err = s3Err(err)
		// AWS and MinIO answer If-Match on a missing key with 404, and AWS
		// may answer a race with 409; either way the version the caller
		// read is no longer current, so it must re-read and retry.
		if errors.Is(err, ErrNotFound) || errors.Is(err, errConflict) {
			return ObjectInfo{}, fmt.Errorf("%w: %q: %v", ErrPreconditionFailed, key, err)
		}
		return ObjectInfo{}, fmt.Errorf("storage: put if match %q: %w", key, err)
	}
	return info, nil
}

// put uploads the body. Bodies of unknown size that fit in one part are
// buffered and sent as a single PUT with a known length; longer ones
// stream as multipart, except conditional writes, which must be one PUT
// and so are spooled to a temp file first.
func (s *S3) put(ctx context.Context, key string, r io.Reader, size int64, conditional bool, opts minio.PutObjectOptions) (ObjectInfo, error) {
	full, err := s.full(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	// Hide any io.Seeker the caller's reader has: minio-go would Seek it
	// to 0 (not to where the caller positioned it) to retry.
	body := io.Reader(ctxReader{ctx, r})
	if size >= 0 {
		body = io.LimitReader(body, size)
	} else {
		head, err := io.ReadAll(io.LimitReader(body, s3PartSize))
		if err != nil {
			return ObjectInfo{}, err
		}
		switch {
		case len(head) < s3PartSize:
			body, size = bytes.NewReader(head), int64(len(head))
		case conditional:
			f, n, err := spool(head, body)
			if err != nil {
				return ObjectInfo{}, err
			}
			defer f.Close()
			body, size = struct{ io.Reader }{f}, n
		default:
			body = io.MultiReader(bytes.NewReader(head), body)
			opts.PartSize = s3PartSize
		}
	}
	if conditional {
		opts.DisableMultipart = true
		// Only seekable bodies are retried by minio-go; see the S3 doc.
		if rs, ok := body.(*bytes.Reader); ok {
			body = struct{ io.Reader }{rs}
		}
	}
	ui, err := s.client.PutObject(ctx, s.bucket, full, body, size, opts)
	if err != nil {
		return ObjectInfo{}, err
	}
	mod := ui.LastModified
	if mod.IsZero() {
		// PUT responses carry no Last-Modified; the client clock is the
		// best cheap approximation (Stat returns the server's).
		mod = time.Now()
	}
	return ObjectInfo{Key: key, Size: ui.Size, ETag: ui.ETag, ModTime: mod}, nil
}

// spool writes head+rest to an unlinked temp file and returns it rewound.
func spool(head []byte, rest io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "lancecat-s3-spool-*")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name()) // space is reclaimed on Close, even after a crash
	n, err := io.Copy(f, io.MultiReader(bytes.NewReader(head), rest))
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("spool body: %w", err)
	}
	return f, n, nil
}
