package catalog

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
)

// The words of the namespace and table lifecycle: a listing's page, a create_table request, and
// the spec's modes and behaviours.

// Modes of CreateNamespace, RegisterTable and DropNamespace, spelled as the spec does.
const (
	ModeCreate       = "Create"
	ModeExistOk      = "ExistOk"
	ModeOverwrite    = "Overwrite"
	ModeFail         = "Fail"
	ModeSkip         = "Skip"
	BehaviorRestrict = "Restrict"
	BehaviorCascade  = "Cascade"
)

// Page is one page of a listing: names in order, and the token of the next page ("" at the end).
type Page struct {
	Names     []string
	NextToken string
}

// PageOf is the page of names (sorted) after token, at most limit of them (all when limit <= 0).
func PageOf(names []string, token string, limit int) Page {
	start := 0
	if token != "" {
		start, _ = slices.BinarySearch(names, token)
		if start < len(names) && names[start] == token {
			start++
		}
	}
	names = names[start:]
	if limit > 0 && len(names) > limit {
		return Page{Names: slices.Clone(names[:limit]), NextToken: names[limit-1]}
	}
	return Page{Names: slices.Clone(names)}
}

// NewTable is a create_table request: the table's rows (possibly none) and where it goes.
type NewTable struct {
	Mode       string // Create (""), ExistOk or Overwrite
	Location   string // "" picks one
	Properties map[string]string
	Schema     *arrow.Schema
	// Rows are the table's rows in Schema (nil: none), streamed into the table's data file as
	// they are read, never held whole.
	Rows RowSource
}

// RowSource opens a stream of a create's rows. The create releases each stream it opened (when
// it has a Release method) once it has read it. A create opens it once, unless it lost a race to
// another creator of the name and writes the rows again where the winner's table is: a source
// that can give its rows only once (a request body read from the network as it arrives) then
// answers an error of its own (ConcurrentModification: try again), which the create returns.
type RowSource func() (RecordStream, error)

// RecordStream is a stream of record batches, as the writers read it.
type RecordStream = lance.RecordStream

// Records is a RowSource of batches held in memory (schema is theirs); it can be opened any
// number of times.
func Records(schema *arrow.Schema, recs ...arrow.RecordBatch) RowSource {
	return func() (RecordStream, error) { return array.NewRecordReader(schema, recs) }
}
