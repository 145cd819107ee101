package storage

import "errors"

// Sentinel errors. Backends wrap them with context; test with errors.Is.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("storage: object not found")
	// ErrExists: PutIfAbsent lost because the key already exists.
	ErrExists = errors.New("storage: object already exists")
	// ErrPreconditionFailed: PutIfMatch lost because the object's ETag no
	// longer matches or the object is gone.
	ErrPreconditionFailed = errors.New("storage: precondition failed")
	// ErrInvalidKey: the key or prefix could address outside the bucket
	// root or is not representable on every backend.
	ErrInvalidKey = errors.New("storage: invalid key")
	// ErrInvalidRange: GetRange asked for bytes the object does not have.
	ErrInvalidRange = errors.New("storage: invalid range")
)
