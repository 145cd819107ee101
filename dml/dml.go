// Package dml implements the data writes of a Lance table: insert, delete,
// update, merge-insert (upsert), add columns from SQL expressions and
// alter a column's data type. Each write is one Lance transaction with
// the operation Lance itself records for it (Append/Overwrite, Delete,
// Update in RewriteRows mode, Merge, Project), so the official clients
// read the history, and concurrent writers are resolved as Lance resolves
// them: compatible commits are rebased, a retryable conflict (another
// writer changed the same rows or fragments) reruns the whole write on the
// new head, as Lance's RetryExecutor does, and anything else is the lance
// conflict sentinel (ConcurrentModification). Every write goes into the
// table's own data storage version (lance.Version.DataStorageVersion).
package dml

import (
	"context"
	"errors"
	"time"

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

// ConflictRetries is how often a write that lost to a concurrent change of
// the same rows or fragments is rerun on the new head (Lance's default
// conflict_retries is 10).
const ConflictRetries = 10

// withRetry runs attempt until it succeeds, fails with anything but a
// retryable conflict, or has been rerun ConflictRetries times.
func withRetry(ctx context.Context, attempt func() (Result, error)) (Result, error) {
	for i := 0; ; i++ {
		res, err := attempt()
		if err == nil || !errors.Is(err, lance.ErrRetryableConflict) || i >= ConflictRetries {
			return res, err
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(time.Duration(i+1) * 5 * time.Millisecond):
		}
	}
}

// head opens the newest version and its Arrow schema.
func head(ctx context.Context, ds *lance.Dataset) (*lance.Version, *arrow.Schema, error) {
	ver, err := ds.OpenLatest(ctx)
	if err != nil {
		return nil, nil, err
	}
	schema, err := ver.ArrowSchema()
	if err != nil {
		return nil, nil, err
	}
	return ver, schema, nil
}

// writeOptions are the options of the data files of a write to ver: the
// table's own data storage version.
func writeOptions(ver *lance.Version) lance.WriteOptions {
	return lance.WriteOptions{DataStorageVersion: ver.DataStorageVersion()}
}

func invalid(format string, args ...any) error { return nserr.InvalidInputf(format, args...) }
