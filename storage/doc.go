// Package storage is lancecat's object store abstraction: one Bucket
// interface over local disk and S3-compatible stores, with the conditional
// writes (PutIfAbsent, PutIfMatch) a catalog needs to commit safely.
//
// Keys are slash-separated and relative to the bucket's root (a directory
// for the filesystem backend, a key prefix for S3). Every backend validates
// keys with ValidateKey before touching the store, so no key can address
// anything outside the root.
//
// Semantics every backend implements (checked by storagetest.Run):
//
//   - ETags are opaque. Two writes of different content to the same key
//     always produce different ETags; identical content may produce the
//     same ETag (as on S3), which is harmless for compare-and-swap because
//     the caller's premise — the bytes it read — still holds.
//   - Put with size >= 0 reads exactly size bytes; a shorter body fails and
//     leaves the key untouched. size < 0 streams until EOF.
//   - GetRange follows S3 range semantics: a range starting at or past the
//     end of a non-empty object fails with ErrInvalidRange; a range that
//     runs past the end is truncated to the object. Offset 0 always
//     succeeds, so GetRange(k, 0, -1) of an empty object is an empty body.
//   - List returns keys in lexicographic (byte) order. Limit <= 0 or above
//     MaxListLimit means MaxListLimit. A page may hold fewer than Limit
//     entries even when more remain; only NextStartAfter == "" means done,
//     and a non-empty NextStartAfter may be followed by an empty last page.
package storage
