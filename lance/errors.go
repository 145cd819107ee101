package lance

import "errors"

// Sentinel errors; callers test with errors.Is. The catalog maps them to its
// own error codes, so this package stays free of HTTP concerns.
var (
	// ErrDatasetNotFound: _versions/ holds no manifest.
	ErrDatasetNotFound = errors.New("lance: dataset not found")
	// ErrVersionNotFound: the requested version has no manifest.
	ErrVersionNotFound = errors.New("lance: version not found")
	// ErrCorruptManifest: a manifest file is not a valid Lance manifest.
	ErrCorruptManifest = errors.New("lance: corrupt manifest")
	// ErrMixedNamingSchemes: _versions/ holds both V1 and V2 manifest names.
	// Lance refuses such a directory too (it is a half-finished migration).
	ErrMixedNamingSchemes = errors.New("lance: _versions/ mixes V1 and V2 manifest names")
	// ErrVersionExists: a manifest for that version is already published
	// (another writer won the race for it).
	ErrVersionExists = errors.New("lance: version already exists")
	// ErrRowCountUnknown: a manifest written by an old Lance lacks the row or
	// deletion counts, so rows cannot be counted without reading files.
	ErrRowCountUnknown = errors.New("lance: row count not recorded in manifest")
	// ErrUnsupportedFeature: the dataset uses feature flags this package
	// does not implement (written by a newer Lance).
	ErrUnsupportedFeature = errors.New("lance: unsupported dataset feature")
)
