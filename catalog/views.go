package catalog

import "github.com/lancecat/lancecat/ident"

// The requests of the materialized views and computed columns (package mview implements them;
// catalog/governed authorizes them; handlers take them through an interface of their own).

// ComputedColumn is a computed column to declare (add_columns `computed`): Name joins the
// schema all-null, Expr (SQL over the row) is what a backfill fills it with.
type ComputedColumn struct {
	Name string
	Expr string
}

// BackfillRequest is one backfill of a computed column (backfill_column).
type BackfillRequest struct {
	Table  ident.ID
	Column string
	Where  string // "" all rows; else only matching rows get the value, the others keep theirs
	Batch  int    // fragments per commit (0: the default, mview.DefaultBackfillBatch)
}
