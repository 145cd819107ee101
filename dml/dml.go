// Package dml implements the data writes of a Lance table: insert, delete,
// update, merge-insert (upsert), add columns from SQL expressions and
// alter a column's data type. Each write is one Lance transaction with
// the operation Lance itself records for it (Append/Overwrite, Delete,
// Update, Merge, DataReplacement/Project), so the official clients read
// the history and concurrent writers are resolved as Lance resolves them.
// Every write goes into the table's own data storage version.
package dml

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// Result is what a write did: the version it committed and the rows it
// inserted, updated and deleted.
type Result struct {
	Version                    *lance.Version
	Inserted, Updated, Deleted uint64
}

// Assignment sets Column to the value of the SQL expression Expr
// (evaluated per row, cast to the column's type).
type Assignment struct{ Column, Expr string }

// MergeInsert configures Merge (Lance's merge_insert).
type MergeInsert struct {
	On                                 []string // composite key, one or more columns
	WhenMatchedUpdateAll               bool
	WhenMatchedUpdateAllFilter         string
	WhenNotMatchedInsertAll            bool
	WhenNotMatchedBySourceDelete       bool
	WhenNotMatchedBySourceDeleteFilter string
}

// NewColumn is a column added by AddColumns: Name holds the value of the
// SQL expression Expr over each row.
type NewColumn struct{ Name, Expr string }

// Alteration changes one column: rename, nullability, or (DataType != nil)
// its data type, which rewrites the column (cast).
type Alteration struct {
	Path     string
	Rename   *string
	Nullable *bool
	DataType arrow.DataType
}

var errTODO = nserr.Unsupportedf("dml: not implemented yet")

// Insert appends rs (or, overwrite, replaces the table's data with it).
func Insert(ctx context.Context, ds *lance.Dataset, rs lance.RecordStream, overwrite bool) (Result, error) {
	return Result{}, errTODO
}

// Delete deletes the rows matching predicate.
func Delete(ctx context.Context, ds *lance.Dataset, predicate string) (Result, error) {
	return Result{}, errTODO
}

// Update sets columns of the rows matching predicate ("" = every row).
func Update(ctx context.Context, ds *lance.Dataset, predicate string, set []Assignment) (Result, error) {
	return Result{}, errTODO
}

// Merge upserts rs into the table on the key columns m.On.
func Merge(ctx context.Context, ds *lance.Dataset, rs lance.RecordStream, m MergeInsert) (Result, error) {
	return Result{}, errTODO
}

// AddColumns adds columns computed from SQL expressions over each row.
func AddColumns(ctx context.Context, ds *lance.Dataset, cols []NewColumn) (*lance.Version, error) {
	return nil, errTODO
}

// AlterColumns renames columns, changes their nullability or their data
// type (rewriting the column).
func AlterColumns(ctx context.Context, ds *lance.Dataset, alts []Alteration) (*lance.Version, error) {
	return nil, errTODO
}
