// Package lance is a pure-Go implementation of the Lance table format: the
// manifests under _versions/, their naming schemes, and reading any version
// of a dataset from an object store.
//
// Everything here talks to storage through storage.Bucket, with keys relative
// to the dataset root ("_versions/…", "data/…"). Protobuf messages are kept
// as generated types (lance/pb/…) rather than copied into Go structs, so
// fields written by newer Lance releases survive a read-modify-write.
package lance
