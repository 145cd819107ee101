package app

import (
	"github.com/lancecat/lancecat/table"
)

// IndexBuildConfig says which create_table_index builds run in the background (answered at once,
// progress in GET /v1/table/{id}/tasks; namespace/indices_build.go).
type IndexBuildConfig struct {
	// BackgroundRows: builds on tables of at least this many live rows run in the background (0:
	// namespace's default, 1,000,000; negative: never by rows).
	BackgroundRows int64
	// BackgroundBytes: likewise by the table's data bytes (0: 2 GiB; negative: never by bytes).
	BackgroundBytes int64
}

func (c *IndexBuildConfig) bindFlags(b binder) {
	b.int64(&c.BackgroundRows, "index-background-rows", "LANCECAT_INDEX_BACKGROUND_ROWS",
		"index builds on tables of at least this many rows run in the background (create answers at once; progress in GET /v1/table/{id}/tasks); 0: 1000000, negative: never")
	b.int64(&c.BackgroundBytes, "index-background-bytes", "LANCECAT_INDEX_BACKGROUND_BYTES",
		"index builds on tables of at least this many data bytes run in the background; 0: 2 GiB, negative: never")
}

// options are the namespace's IndexBuildOptions for this config.
func (c IndexBuildConfig) options() table.IndexBuildOptions {
	return table.IndexBuildOptions{BackgroundRows: c.BackgroundRows, BackgroundBytes: c.BackgroundBytes}
}
