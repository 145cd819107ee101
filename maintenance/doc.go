// Package maintenance runs the background work on the catalog's data. Today: the trash expiry
// purge (PurgeTrash: bytes and records of drops past their deadline), the loop every replica may
// run it in (PurgeTrashEvery), and what the `lancecat trash` commands do (ListTrash,
// RunTrashPurge), and compaction as Lance plans and commits it (Plan, Compact: compact.go). Next:
// the table sweep (compact → optimize indices → cleanup), the orphan scan and the drift
// reconciler. It never deletes anything a report has not cleared. It works through
// governance's records API (governance never imports it).
package maintenance
