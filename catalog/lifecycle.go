package catalog

import "github.com/apache/arrow-go/v18/arrow"

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

// NewTable is a create_table request: the table's rows (possibly none) and where it goes.
type NewTable struct {
	Mode       string // Create (""), ExistOk or Overwrite
	Location   string // "" picks one
	Properties map[string]string
	Schema     *arrow.Schema
	Records    []arrow.RecordBatch
}
