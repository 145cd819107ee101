package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lancecat/lancecat/storage"
)

// Errors of the record protocol. Callers decide what a lost create means (converge on an identical
// record, or a 409 of their kind); a malformed record is a 503 everywhere, never "absent".
var (
	ErrExists    = errors.New("registry: record already exists")
	ErrNotFound  = errors.New("registry: record not found")
	ErrChanged   = errors.New("registry: record kept changing; retry")
	ErrMalformed = errors.New("registry: record is malformed")
)

// Record is a JSON record with a declared shape.
type Record interface {
	Validate() error
}

// Store reads and writes records on a control root.
type Store struct {
	bucket storage.Bucket
	// MutateAttempts bounds the read-modify-write retries of Mutate.
	MutateAttempts int
}

// NewStore returns a store over the control root bucket.
func NewStore(b storage.Bucket) *Store { return &Store{bucket: b, MutateAttempts: 8} }

func encode(rec Record) ([]byte, error) {
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("registry: refusing to write an invalid record: %w", err)
	}
	b, err := marshalRecord(rec) // with the fields this version does not know (unknown.go)
	if err != nil {
		return nil, fmt.Errorf("registry: encoding record: %w", err)
	}
	return append(b, '\n'), nil
}

// malformed reports a record that exists but cannot be trusted: the errors table answers code 17 for
// ErrMalformed, so no caller reads it as absent and acts on that.
func malformed(key string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformed, key, err)
}

// Create writes rec at key only if no record is there (put-if-absent): of any number of racing
// creators, across replicas, exactly one wins; the others get ErrExists.
func Create[T Record](ctx context.Context, s *Store, key string, rec T) error {
	body, err := encode(rec)
	if err != nil {
		return err
	}
	if _, err := s.bucket.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body))); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return fmt.Errorf("%w: %s", ErrExists, key)
		}
		return fmt.Errorf("registry: creating %s: %w", key, err)
	}
	return nil
}

// Put overwrites the record at key unconditionally; only for records with a single writer.
func Put[T Record](ctx context.Context, s *Store, key string, rec T) error {
	body, err := encode(rec)
	if err != nil {
		return err
	}
	if _, err := s.bucket.Put(ctx, key, bytes.NewReader(body), int64(len(body))); err != nil {
		return fmt.Errorf("registry: writing %s: %w", key, err)
	}
	return nil
}

// Read returns the record at key and its ETag.
func Read[T Record](ctx context.Context, s *Store, key string) (T, string, error) {
	var zero T
	rc, info, err := s.bucket.Get(ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return zero, "", fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		return zero, "", fmt.Errorf("registry: reading %s: %w", key, err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, maxRecordBytes+1))
	if err != nil {
		return zero, "", fmt.Errorf("registry: reading %s: %w", key, err)
	}
	rec, err := decode[T](raw)
	if err != nil {
		return zero, "", malformed(key, err)
	}
	return rec, info.ETag, nil
}

// maxRecordBytes bounds a record: they are small, and a huge object is not one of ours.
const maxRecordBytes = 1 << 20

func decode[T Record](raw []byte) (T, error) {
	var rec T
	if len(raw) > maxRecordBytes {
		return rec, fmt.Errorf("larger than %d bytes", maxRecordBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&rec); err != nil {
		return rec, err
	}
	if dec.More() {
		return rec, errors.New("trailing data after the record")
	}
	if err := keepUnknown(raw, &rec); err != nil { // unknown.go
		return rec, err
	}
	if err := rec.Validate(); err != nil {
		return rec, err
	}
	return rec, nil
}

// Mutate applies fn to the record at key as an ETag-guarded read-modify-write: fn sees what was
// read, and its result is written only if nobody wrote in between; otherwise it re-reads and
// re-applies, up to MutateAttempts times (then ErrChanged). fn must be a pure function of its
// input. A missing record is ErrNotFound (it raced a delete).
func Mutate[T Record](ctx context.Context, s *Store, key string, fn func(*T) error) (T, error) {
	var zero T
	for range max(s.MutateAttempts, 1) {
		rec, etag, err := Read[T](ctx, s, key)
		if err != nil {
			return zero, err
		}
		if err := fn(&rec); err != nil {
			return zero, err
		}
		body, err := encode(rec)
		if err != nil {
			return zero, err
		}
		_, err = s.bucket.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag)
		if err == nil {
			return rec, nil
		}
		if !errors.Is(err, storage.ErrPreconditionFailed) {
			return zero, fmt.Errorf("registry: writing %s: %w", key, err)
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
	}
	return zero, fmt.Errorf("%w: %s", ErrChanged, key)
}

// Delete removes the record at key; a missing record is not an error.
func Delete(ctx context.Context, s *Store, key string) error {
	if err := s.bucket.Delete(ctx, key); err != nil {
		return fmt.Errorf("registry: deleting %s: %w", key, err)
	}
	return nil
}

// Listed is the outcome of listing records under a prefix: the good ones, and the keys of the
// records that could not be read. A caller about to destroy something must refuse when Skipped is
// not empty; a caller showing a listing may go on and warn.
type Listed[T Record] struct {
	Records []T
	Keys    []string
	Skipped []string
}

// List reads every record directly under prefix (one level, ".json" objects only).
func List[T Record](ctx context.Context, s *Store, prefix string) (Listed[T], error) {
	var out Listed[T]
	opts := storage.ListOptions{Delimiter: true}
	for {
		page, err := s.bucket.List(ctx, prefix, opts)
		if err != nil {
			return out, fmt.Errorf("registry: listing %s: %w", prefix, err)
		}
		for _, obj := range page.Objects {
			if !isRecordKey(obj.Key) {
				continue
			}
			rec, _, err := Read[T](ctx, s, obj.Key)
			switch {
			case errors.Is(err, ErrNotFound):
				continue // deleted since the listing
			case errors.Is(err, ErrMalformed):
				out.Skipped = append(out.Skipped, obj.Key)
				continue
			case err != nil:
				return out, err
			}
			out.Records = append(out.Records, rec)
			out.Keys = append(out.Keys, obj.Key)
		}
		if page.NextStartAfter == "" {
			return out, nil
		}
		opts.StartAfter = page.NextStartAfter
	}
}

func isRecordKey(key string) bool {
	return len(key) > len(".json") && key[len(key)-len(".json"):] == ".json"
}
