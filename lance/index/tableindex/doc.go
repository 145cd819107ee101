// Package tableindex is the glue between a Lance table and its indices: it
// builds, checks, drops, opens and searches the indices of a lance.Dataset
// version, caches opened ones, and after a compaction or an append optimizes
// (merges deltas) and remaps them, committing each change through lance's
// CreateIndex and OptimizeIndices operations.
//
// The formats themselves live in lance/index and the table format in lance;
// this package imports both and neither imports it, so the dependency runs
// one way: lancefile ← index ← lance ← tableindex.
package tableindex
