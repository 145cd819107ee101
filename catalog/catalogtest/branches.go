package catalogtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// The branch operations of the remote table, over the branch routes.

func (t *remoteTable) ListBranches(ctx context.Context, token string, limit int) ([]lance.Branch, string, error) {
	tok, l := listParams(token, limit)
	resp, err := t.r.c.Spec.ListTableBranchesWithResponse(ctx, t.wire, &nsclient.ListTableBranchesParams{PageToken: tok, Limit: l})
	var out nsclient.ListTableBranchesResponse
	if err := decode(resp, err, &out); err != nil {
		return nil, "", err
	}
	var branches []lance.Branch
	for name, c := range out.Branches {
		b := lance.Branch{Name: name, ParentBranch: c.ParentBranch, ParentVersion: uint64(c.ParentVersion),
			CreateAt: uint64(c.CreateAt), ManifestSize: c.ManifestSize}
		if c.Metadata != nil {
			b.Metadata = *c.Metadata
		}
		branches = append(branches, b)
	}
	slices.SortFunc(branches, func(a, b lance.Branch) int { return strings.Compare(a.Name, b.Name) })
	next := ""
	if out.PageToken != nil {
		next = *out.PageToken
	}
	return branches, next, nil
}

func (t *remoteTable) CreateBranch(ctx context.Context, name, from string, version *int64) (lance.Branch, error) {
	body := map[string]any{"name": name}
	if from != "" {
		body["from_branch"] = from
	}
	if version != nil {
		body["from_version"] = *version
	}
	if err := post(ctx, t.r.c.Spec.CreateTableBranchWithBodyWithResponse, t.wire, nil, body, nil); err != nil {
		return lance.Branch{}, err
	}
	return lance.Branch{Name: name}, nil
}

func (t *remoteTable) DeleteBranch(ctx context.Context, name string) error {
	return post(ctx, t.r.c.Spec.DeleteTableBranchWithBodyWithResponse, t.wire, nil, map[string]any{"name": name}, nil)
}

func branchNames(bs []lance.Branch) []string {
	return each(bs, func(b lance.Branch) string { return b.Name })
}

// testBranches: a branch forks main's latest (or a given version of a branch), takes writes that
// main never sees, and every door that takes a branch reads or writes the branch it names; a
// branch that does not exist is TableBranchNotFound for reads and writes alike (a write must not
// start a stray dataset under tree/); delete is refused while a child branch or a tag depends
// on it, and removes the branch.
func testBranches(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "t")
	_, _, err := s.c.CreateTable(ctx, id, catalog.NewTable{Schema: kvSchema})
	assert.NilError(t, err)
	h := s.load(t, id)
	_, err = h.Insert(ctx, "", kvRecords(kvRow{1, 1, "a"}, kvRow{2, 1, "b"}), false) // v2
	assert.NilError(t, err)

	list, _, err := h.ListBranches(ctx, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 0, "a new table has no branches")

	// Default: main's latest.
	_, err = h.CreateBranch(ctx, "dev", "", nil)
	assert.NilError(t, err)
	_, err = h.CreateBranch(ctx, "dev", "", nil)
	code(t, err, nserr.TableBranchAlreadyExists)
	list, _, err = h.ListBranches(ctx, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, branchNames(list), []string{"dev"})
	assert.Equal(t, list[0].ParentVersion, uint64(2))
	assert.Check(t, list[0].ParentBranch == nil, "forked from main")
	assert.Check(t, list[0].ManifestSize > 0 && list[0].CreateAt > 0, "%+v", list[0])

	// Writes on the branch: main does not see them; each door reads the branch it names.
	r, err := h.Insert(ctx, "dev", kvRecords(kvRow{3, 2, "c"}), false)
	assert.NilError(t, err)
	assert.Equal(t, r.Version, uint64(3), "a branch continues its fork's numbering")
	dev, main := catalog.ReadAt{Branch: "dev"}, catalog.ReadAt{}
	n, at, err := s.load(t, id).Count(ctx, dev, "")
	assert.NilError(t, err)
	assert.Check(t, n == 3 && at == 3, "dev: %d rows at %d", n, at)
	n, at, err = s.load(t, id).Count(ctx, main, "")
	assert.NilError(t, err)
	assert.Check(t, n == 2 && at == 2, "main: %d rows at %d", n, at)
	_, err = h.UpdateSchemaMetadata(ctx, "dev", lance.MetadataUpdate{"on": lance.Set("dev")}) // dev v4
	assert.NilError(t, err)
	st, err := s.load(t, id).State(ctx, catalog.DescribeOptions{Branch: "dev"})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(4))
	st, err = s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(2))
	stats, err := s.load(t, id).Stats(ctx, "dev")
	assert.NilError(t, err)
	assert.Equal(t, stats.NumRows, uint64(3))
	vs, _, err := h.ListVersions(ctx, catalog.VersionQuery{Branch: "dev", Descending: true, Limit: 1})
	assert.NilError(t, err)
	assert.DeepEqual(t, versions(vs), []uint64{4})
	dv, err := h.DescribeVersion(ctx, "dev", nil)
	assert.NilError(t, err)
	assert.Equal(t, dv.Version, uint64(4))
	_, err = h.ListIndices(ctx, "dev", nil)
	assert.NilError(t, err)

	// A branch of the branch, at one of its versions.
	three := int64(3)
	_, err = h.CreateBranch(ctx, "dev/fix", "dev", &three)
	assert.NilError(t, err)
	n, at, err = s.load(t, id).Count(ctx, catalog.ReadAt{Branch: "dev/fix"}, "")
	assert.NilError(t, err)
	assert.Check(t, n == 3 && at == 3, "dev/fix: %d rows at %d", n, at)
	list, _, err = h.ListBranches(ctx, "", 1)
	assert.NilError(t, err)
	assert.DeepEqual(t, branchNames(list), []string{"dev"})
	list, next, err := h.ListBranches(ctx, "dev", 1)
	assert.NilError(t, err)
	assert.Equal(t, next, "", "the last page")
	assert.DeepEqual(t, branchNames(list), []string{"dev/fix"})
	assert.Equal(t, *list[0].ParentBranch, "dev")
	assert.Equal(t, list[0].ParentVersion, uint64(3))

	// What cannot be branched.
	nine := int64(9)
	_, err = h.CreateBranch(ctx, "x", "", &nine)
	code(t, err, nserr.TableVersionNotFound)
	_, err = h.CreateBranch(ctx, "x", "nobranch", nil)
	code(t, err, nserr.TableBranchNotFound)
	_, err = h.CreateBranch(ctx, "main", "", nil)
	code(t, err, nserr.InvalidInput)
	_, err = h.CreateBranch(ctx, "a//b", "", nil)
	code(t, err, nserr.InvalidInput)

	// A branch nobody created: reads and writes say so, and nothing is written.
	_, err = h.Insert(ctx, "nobranch", kvRecords(kvRow{9, 9, "z"}), false)
	code(t, err, nserr.TableBranchNotFound)
	_, _, err = s.load(t, id).Count(ctx, catalog.ReadAt{Branch: "nobranch"}, "")
	code(t, err, nserr.TableBranchNotFound)
	_, err = h.UpdateSchemaMetadata(ctx, "nobranch", lance.MetadataUpdate{"x": lance.Set("1")})
	code(t, err, nserr.TableBranchNotFound)
	_, err = s.load(t, id).Stats(ctx, "nobranch")
	code(t, err, nserr.TableBranchNotFound)
	_, err = h.CreateTag(ctx, "tn", 1, "nobranch")
	code(t, err, nserr.TableBranchNotFound)
	vs, _, err = h.ListVersions(ctx, catalog.VersionQuery{Branch: "nobranch"})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 0, "an unknown branch has no versions (what clients expect)")
	list, _, err = h.ListBranches(ctx, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, branchNames(list), []string{"dev", "dev/fix"})

	// Delete: refused while a child branch or a tag depends on it.
	code(t, h.DeleteBranch(ctx, "dev"), nserr.InvalidTableState)
	_, err = h.CreateTag(ctx, "fixed", 3, "dev/fix")
	assert.NilError(t, err)
	err = h.DeleteBranch(ctx, "dev/fix")
	code(t, err, nserr.InvalidTableState)
	assert.ErrorContains(t, err, "fixed")
	assert.NilError(t, h.DeleteTag(ctx, "fixed"))
	assert.NilError(t, h.DeleteBranch(ctx, "dev/fix"))
	assert.NilError(t, h.DeleteBranch(ctx, "dev"))
	code(t, h.DeleteBranch(ctx, "dev"), nserr.TableBranchNotFound)
	code(t, h.DeleteBranch(ctx, "main"), nserr.InvalidInput)
	_, _, err = s.load(t, id).Count(ctx, dev, "")
	code(t, err, nserr.TableBranchNotFound)
	list, _, err = h.ListBranches(ctx, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 0)
	// Main is untouched by all of it.
	n, _, err = s.load(t, id).Count(ctx, main, "")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(2))
}
