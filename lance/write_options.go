package lance

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// WriteMode says what Dataset.Write does with an existing dataset.
type WriteMode uint8

const (
	// WriteCreate makes version 1 of a new dataset; an existing one is an
	// error (ErrDatasetExists).
	WriteCreate WriteMode = iota
	// WriteAppend adds fragments to the newest version (creating the
	// dataset when there is none, as Lance's append mode does).
	WriteAppend
	// WriteOverwrite replaces schema and data (keeping history, config and
	// the fragment id counter); on a missing dataset it creates one.
	WriteOverwrite
)

func (m WriteMode) String() string {
	switch m {
	case WriteCreate:
		return "create"
	case WriteAppend:
		return "append"
	case WriteOverwrite:
		return "overwrite"
	}
	return "unknown"
}

// Lance's write defaults (WriteParams): a data file holds at most
// DefaultMaxRowsPerFile rows and DefaultMaxBytesPerFile bytes; a fragment is
// one data file.
const (
	DefaultMaxRowsPerFile  = 1024 * 1024
	DefaultMaxRowsPerGroup = 1024
	DefaultMaxBytesPerFile = 90 << 30
)

// WriteOptions tune how records become fragments and how they are
// committed. Zero values mean Lance's defaults.
type WriteOptions struct {
	Mode WriteMode
	// MaxRowsPerFile caps the rows of one data file (and so of one
	// fragment).
	MaxRowsPerFile int
	// MaxRowsPerGroup is the most rows handed to the file writer at once;
	// input batches are cut into pieces of this size, which bounds how far
	// a file may overshoot MaxBytesPerFile.
	MaxRowsPerGroup int
	// MaxBytesPerFile starts a new file once this many bytes are written
	// (checked between groups, so a file may exceed it by about a page per
	// column).
	MaxBytesPerFile int64
	// PageBytes is the unencoded size of a column's page in the data files
	// (lancefile.DefaultPageBytes when 0).
	PageBytes int
	// EnableStableRowIDs gives a new dataset stable row ids (Lance's
	// enable_stable_row_ids). Only for WriteCreate or an overwrite that
	// creates; an existing dataset keeps what it has.
	EnableStableRowIDs bool
	// DataStorageVersion is the Lance file format of the data files:
	// "2.1" (the default when empty) or "2.2". Write sets it to the
	// dataset's own data storage version when the dataset exists; it
	// chooses the version of a new dataset.
	DataStorageVersion string
	// Config is merged into the table config on create and overwrite
	// (Lance's config_upsert_values).
	Config map[string]string
	// Commit tunes the commit (read version, retries).
	Commit CommitOptions
	// Mem allocates the Arrow buffers the writer needs (default: Go heap).
	Mem memory.Allocator
}

func (o WriteOptions) withDefaults() WriteOptions {
	if o.MaxRowsPerFile <= 0 {
		o.MaxRowsPerFile = DefaultMaxRowsPerFile
	}
	if o.MaxRowsPerGroup <= 0 {
		o.MaxRowsPerGroup = DefaultMaxRowsPerGroup
	}
	if o.MaxBytesPerFile <= 0 {
		o.MaxBytesPerFile = DefaultMaxBytesPerFile
	}
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.DataStorageVersion == "" {
		o.DataStorageVersion = "2.1"
	}
	return o
}

// fileVersion is the data file format of a data storage version.
func fileVersion(v string) (lancefile.Version, error) {
	switch v {
	case "2.1", "":
		return lancefile.V2_1, nil
	case "2.2":
		return lancefile.V2_2, nil
	}
	return lancefile.Version{}, Errorf(ErrUnsupportedFeature, "lance: lancecat writes Lance data files of versions 2.1 and 2.2, not %s", v)
}

// RecordStream is a stream of record batches of one schema: what
// Dataset.Write consumes. arrow-go's array.RecordReader and ipc.Reader
// satisfy it. A batch is only used until the next call to Next.
type RecordStream interface {
	Schema() *arrow.Schema
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}
