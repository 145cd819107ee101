// Package table holds the operations on one table of a root: its state, data (queries and
// writes through package query and dml), versions, branches, tags, schema evolution and index
// builds, each on the table's Lance dataset. The directory namespace that finds tables and
// coordinates transactions over several of them (package namespace) hands out its handles
// (New) and is, to them, a Root.
package table
