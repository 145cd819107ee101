package table

import nserr "github.com/lancecat/lancecat/errors"

// The LanceDB remote client's table operations this server does not back yet, each refused
// (406) with why, so the SDK reports the missing feature instead of a 404 it reads as a missing
// table or branch.

// ErrBranchDiff answers branches/diff.
func ErrBranchDiff() error {
	return nserr.Unsupportedf("operation DiffTableBranch (branch diff, POST /v1/table/{id}/branches/diff) is not supported by this server yet: " +
		"LanceDB's BranchDiff reports row-level changes (unchanged, new on either side, inputs changed) that need " +
		"a row-id diff lancecat does not compute; list both branches' versions and schemas instead")
}

// ErrCherryPick answers branches/cherry_pick.
func ErrCherryPick() error {
	return nserr.Unsupportedf("operation CherryPickTableBranch (cherry-pick, POST /v1/table/{id}/branches/cherry_pick) is not supported by this server yet: " +
		"promoting a branch's columns onto main needs the branch diff, which is not backed either")
}

// ErrClone answers clone.
func ErrClone() error {
	return nserr.Unsupportedf("operation CloneTable (clone, POST /v1/table/{id}/clone) is not supported by this server yet: a shallow clone " +
		"reads the source's data files, and the trash purge and orphan cleanup of either table must first learn " +
		"never to delete what the other references; a deep clone is to follow with it")
}
