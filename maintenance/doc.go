// Package maintenance runs the background work on the catalog's data: the trash expiry purge
// (PurgeTrash: bytes and records of drops past their deadline), the loop every replica may run it
// in (PurgeTrashEvery), and what the `lancecat trash` commands do (ListTrash, RunTrashPurge);
// compaction as Lance plans and commits it, indices remapped (Plan, Compact: compact.go,
// compact_remap.go); one table's maintenance pass — compact → optimize indices
// (lance.Dataset.OptimizeIndices) → cleanup by the table's policy, then index health
// (health.go) (Run: run.go; cleanup itself is lance.Dataset.Cleanup); and the sweep over every
// table of the catalog, one replica per table at a time through a lease on the table's root
// (Service: service.go, lease.go); the orphan scan and its repair per table (orphans.go) and
// above tables (drift.go: rows, directories, governance records). It never
// deletes anything a report has not cleared. It works through governance's records API
// (governance never imports it).
package maintenance
