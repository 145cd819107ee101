package table

// The branch operations of a table (list_table_branches, create_table_branch,
// delete_table_branch) on Lance's own branch layout (lance/branches.go): a branch is a
// _refs/branches/<name>.json at the table's root and a shallow clone under tree/<name>/, so the
// SDK reading the same storage sees the branches made here and the reverse. The catalog keeps no
// record of its own: the refs are the one truth.

import (
	"context"
	"errors"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// isMain reports whether branch names the main branch.
func isMain(branch string) bool { return branch == "" || branch == "main" }

// branchDataset is the dataset of branch of t, which must exist: TableBranchNotFound otherwise.
// Every door that reads or writes a branch goes through it, so a write to a branch nobody
// created is refused (lance would otherwise start a new dataset under tree/<name>/ that no ref
// names) and a read of one says which branch is missing rather than "no version". One small
// read (the ref) for a branch; none for main.
//
// The version doors (list, describe and create version) do not: a managed-versioning client
// creating a branch commits its first version through the catalog before it writes the ref, and
// lists an unknown branch's versions as "none yet".
func (h *Table) branchDataset(ctx context.Context, branch string) (*lance.Dataset, error) {
	return BranchDataset(ctx, h.root.Dataset(h.t), h.t, branch)
}

// BranchDataset is the dataset of branch of ds, table t's dataset (Table's branchDataset).
func BranchDataset(ctx context.Context, ds *lance.Dataset, t *catalog.Entry, branch string) (*lance.Dataset, error) {
	ds, err := OnBranch(ds, t, branch)
	if err != nil || isMain(branch) {
		return ds, err
	}
	if _, err := ds.Main().GetBranch(ctx, branch); err != nil {
		return nil, branchErr(t, branch, err)
	}
	return ds, nil
}

// branchErr says which table a missing branch is missing from.
func branchErr(t *catalog.Entry, branch string, err error) error {
	if errors.Is(err, lance.ErrBranchNotFound) {
		return nserr.TableBranchNotFoundf("table %s has no branch %q", quoteID(t.ID), branch)
	}
	return Err(t, err)
}

// ListBranches lists t's branches by name (after token, at most limit of them when limit > 0).
func (h *Table) ListBranches(ctx context.Context, token string, limit int) ([]lance.Branch, string, error) {
	t := h.t
	branches, err := h.root.Dataset(t).ListBranches(ctx)
	if err != nil {
		return nil, "", Err(t, err)
	}
	out, next := pageByName(branches, func(b lance.Branch) string { return b.Name }, token, limit)
	return out, next, nil
}

// CreateBranch forks branch name of t from version of branch from ("" for main; nil for its
// latest), as Lance's create_branch does. TableBranchAlreadyExists if the name is taken,
// TableBranchNotFound if from is not a branch, TableVersionNotFound if it has no such version.
func (h *Table) CreateBranch(ctx context.Context, name, from string, version *int64) (lance.Branch, error) {
	t := h.t
	var v uint64
	if version != nil {
		if *version <= 0 {
			return lance.Branch{}, nserr.InvalidInputf("from_version %d is not a table version", *version)
		}
		v = uint64(*version)
	}
	if isMain(from) {
		from = ""
	} else if _, err := h.branchDataset(ctx, from); err != nil {
		return lance.Branch{}, err
	}
	b, _, err := h.root.Dataset(t).CreateBranch(ctx, name, from, v)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return lance.Branch{}, nserr.TableVersionNotFoundf("table %s has no version to branch from: it is declared, and no client has written it", quoteID(t.ID))
	}
	return b, Err(t, err)
}

// DeleteBranch deletes branch name of t and its files. Refused while another branch was forked
// from it or a tag points into it (InvalidTableState, naming them), as Lance refuses.
func (h *Table) DeleteBranch(ctx context.Context, name string) error {
	t := h.t
	if isMain(name) {
		return nserr.InvalidInputf("the main branch cannot be deleted: drop the table instead")
	}
	err := h.root.Dataset(t).DeleteBranch(ctx, name)
	if errors.Is(err, lance.ErrBranchNotFound) {
		return branchErr(t, name, err)
	}
	return Err(t, err)
}
