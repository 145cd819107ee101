package lance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

func TestRefNames(t *testing.T) {
	for _, ok := range []string{"ref", "ref-with-dashes", "ref.extension", "ref_with_underscores", "v1.2.3-rc4"} {
		assert.Check(t, CheckTagName(ok), ok)
	}
	for _, bad := range []string{"", "../ref", ".ref", "/ref", "@", "nested/ref", "ref*", "ref.lock", "ref/", "ref.", "ref..ref", "a b"} {
		assert.Check(t, errors.Is(CheckTagName(bad), ErrInvalidRef), bad)
	}
	for _, ok := range []string{"feature/login", "bugfix/issue-123", "user/someone/my-feature", "normal", "with.dot"} {
		assert.Check(t, CheckBranchName(ok), ok)
	}
	for _, bad := range []string{"", "/start", "end/", "a//b", "have..dot", `a\b`, "name.lock", "bad@char", "bad seg", "main"} {
		assert.Check(t, errors.Is(CheckBranchName(bad), ErrInvalidRef), bad)
	}
}

// TestTagJSON: byte for byte what Lance 8.0 writes.
func TestTagJSON(t *testing.T) {
	ts := &RefTime{time.Date(2026, 11, 29, 17, 36, 7, 161534508, time.UTC)}
	body, err := encodeRef(Tag{Name: "first", Version: 1, CreatedAt: ts, UpdatedAt: ts, ManifestSize: 626, Metadata: map[string]string{}}.file())
	assert.NilError(t, err)
	assert.Equal(t, string(body), `{
  "branch": null,
  "version": 1,
  "createdAt": "2026-11-29T17:36:07.161534508Z",
  "updatedAt": "2026-11-29T17:36:07.161534508Z",
  "manifestSize": 626,
  "metadata": {}
}`)
	for ns, want := range map[int]string{0: "05Z", 5e8: "05.500Z", 123000: "05.000123Z", 7: "05.000000007Z"} {
		b, _ := RefTime{time.Date(2026, 1, 1, 0, 0, 5, ns, time.UTC)}.MarshalJSON()
		assert.Check(t, strings.HasSuffix(string(b), want+`"`), string(b))
	}
	// The minimal form Lance accepts reads back; without manifestSize it is refused.
	tag, err := decodeTag("x", []byte(`{"version":1,"manifestSize":408}`))
	assert.NilError(t, err)
	assert.Equal(t, tag.ManifestSize, int64(408))
	_, err = decodeTag("x", []byte(`{"version":1}`))
	assert.ErrorContains(t, err, "manifestSize")
}

func TestTags(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := seed(t, store, NamingV2)
	_, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"x": Set("1")})
	assert.NilError(t, err)

	tag, err := ds.CreateTag(ctx, "first", 1, "")
	assert.NilError(t, err)
	loc, _ := ds.ResolveVersion(ctx, 1)
	assert.Equal(t, tag.ManifestSize, loc.Size)
	_, err = ds.CreateTag(ctx, "first", 2, "")
	assert.Check(t, errors.Is(err, ErrTagExists))
	_, err = ds.CreateTag(ctx, "nope", 9, "")
	assert.Check(t, errors.Is(err, ErrVersionNotFound))
	_, err = ds.CreateTag(ctx, "bad/name", 1, "")
	assert.Check(t, errors.Is(err, ErrInvalidInput))
	_, err = ds.CreateTag(ctx, "second", 2, "")
	assert.NilError(t, err)

	tags, err := ds.ListTags(ctx)
	assert.NilError(t, err)
	assert.DeepEqual(t, []string{tags[0].Name, tags[1].Name}, []string{"second", "first"})

	updated, err := ds.UpdateTag(ctx, "first", 2, "")
	assert.NilError(t, err)
	assert.Equal(t, updated.Version, uint64(2))
	assert.Check(t, updated.CreatedAt.Equal(tag.CreatedAt.Time), "update keeps createdAt")
	v, err := ds.TagVersion(ctx, "first")
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(2))
	opened, err := ds.OpenTag(ctx, "second")
	assert.NilError(t, err)
	assert.Equal(t, opened.Number(), uint64(2))
	_, err = ds.UpdateTag(ctx, "missing", 1, "")
	assert.Check(t, errors.Is(err, ErrTagNotFound))

	assert.NilError(t, ds.DeleteTag(ctx, "first"))
	assert.Check(t, errors.Is(ds.DeleteTag(ctx, "first"), ErrTagNotFound))
	_, err = ds.GetTag(ctx, "first")
	assert.Check(t, errors.Is(err, ErrTagNotFound))

	// Tags are stored as Lance names them and parse as Lance JSON.
	raw, err := readObject(ctx, store, "_refs/tags/second.json", 1<<10)
	assert.NilError(t, err)
	var m map[string]any
	assert.NilError(t, json.Unmarshal(raw, &m))
	assert.Check(t, is.Contains(m, "manifestSize"))
	assert.Check(t, m["branch"] == nil)
}

func TestBranches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ds := NewDatasetAt(store, dir)
	_, err = ds.PutManifest(ctx, NamingV2, testManifestFile(1, fragment(0, 10, 3)))
	assert.NilError(t, err)
	_, err = ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"x": Set("1")})
	assert.NilError(t, err)

	b, v, err := ds.CreateBranch(ctx, "feature/x", "", 0)
	assert.NilError(t, err)
	assert.Equal(t, b.ParentVersion, uint64(2))
	assert.Check(t, b.ParentBranch == nil)
	assert.Equal(t, v.Number(), uint64(2), "a branch starts at its fork version")
	assert.Equal(t, v.Location.Key, NamingV2.ManifestKey(2))
	m := v.Manifest()
	assert.Equal(t, m.GetBranch(), "feature/x")
	assert.Equal(t, len(m.GetBasePaths()), 1)
	assert.Equal(t, m.GetBasePaths()[0].GetPath(), dir)
	assert.Check(t, m.GetBasePaths()[0].GetIsDatasetRoot())
	assert.Equal(t, m.GetReaderFeatureFlags(), FlagDeletionFiles|FlagBasePaths)
	assert.Equal(t, m.GetFragments()[0].GetFiles()[0].GetBaseId(), uint32(0))
	assert.Check(t, m.GetFragments()[0].GetFiles()[0].BaseId != nil)
	assert.Check(t, m.GetFragments()[0].GetDeletionFile().BaseId != nil)
	assert.Check(t, v.Indices()[0].BaseId != nil)
	clone := v.Transaction().GetClone()
	assert.Check(t, clone.GetIsShallow())
	assert.Equal(t, clone.GetRefPath(), dir)
	assert.Equal(t, clone.GetBranchName(), "feature/x")
	_, err = store.Stat(ctx, "_refs/branches/feature%2Fx.json")
	assert.NilError(t, err)
	_, err = store.Stat(ctx, "tree/feature/x/_transactions/"+m.GetTransactionFile())
	assert.NilError(t, err)

	_, _, err = ds.CreateBranch(ctx, "feature/x", "", 0)
	assert.Check(t, errors.Is(err, ErrBranchExists))

	// Commits on the branch continue its numbering and leave main alone.
	br, err := ds.Branch("feature/x")
	assert.NilError(t, err)
	bv, err := br.UpdateSchemaMetadata(ctx, MetadataUpdate{"on": Set("branch")})
	assert.NilError(t, err)
	assert.Equal(t, bv.Number(), uint64(3))
	mainLatest, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Equal(t, mainLatest.Number(), uint64(2))

	// A tag can point into the branch and lives at the root.
	_, err = br.CreateTag(ctx, "on-branch", 3, "feature/x")
	assert.NilError(t, err)
	_, err = ds.CreateTag(ctx, "nowhere", 1, "no-such-branch")
	assert.Check(t, errors.Is(err, ErrBranchNotFound), "a tag into a missing branch: %v", err)
	tv, err := ds.OpenTag(ctx, "on-branch")
	assert.NilError(t, err)
	assert.Equal(t, string(tv.Manifest().GetSchemaMetadata()["on"]), "branch")

	// Branch of a branch: its own base path to the parent's directory.
	b2, v2, err := ds.CreateBranch(ctx, "feature/x/y", "feature/x", 3)
	assert.NilError(t, err)
	assert.Equal(t, *b2.ParentBranch, "feature/x")
	assert.Equal(t, len(v2.Manifest().GetBasePaths()), 2)

	list, err := ds.ListBranches(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 2)
	assert.Equal(t, list[0].Name, "feature/x")

	err = ds.DeleteBranch(ctx, "feature/x")
	assert.Check(t, errors.Is(err, ErrInvalidTableState), "has a child")
	assert.NilError(t, ds.DeleteBranch(ctx, "feature/x/y"))
	// A tag points into it: refused, naming the tag; nothing is deleted.
	err = ds.DeleteBranch(ctx, "feature/x")
	assert.Check(t, errors.Is(err, ErrInvalidTableState), "tagged")
	assert.ErrorContains(t, err, "on-branch")
	_, err = store.Stat(ctx, "_refs/branches/feature%2Fx.json")
	assert.NilError(t, err)
	assert.NilError(t, ds.DeleteTag(ctx, "on-branch"))
	assert.NilError(t, ds.DeleteBranch(ctx, "feature/x"))
	assert.Check(t, errors.Is(ds.DeleteBranch(ctx, "feature/x"), ErrBranchNotFound))
	left, err := listAll(ctx, store, TreeDir)
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0))

	_, _, err = NewDataset(store).CreateBranch(ctx, "b", "", 0)
	assert.Check(t, errors.Is(err, ErrInvalidInput), "location required")
}

func TestStats(t *testing.T) {
	f := testManifestFile(1, fragment(0, 10, 0), fragment(1, 5, 2), fragment(2, 200_000, 0), fragment(3, 4, 0))
	v := &Version{Location: ManifestLocation{Version: 1}, File: f}
	s, err := v.Stats()
	assert.NilError(t, err)
	assert.DeepEqual(t, s, TableStats{
		Version: 1, TotalBytes: 4 * 1234, DataBytes: 4 * 1234, NumRows: 200_017, NumIndices: 1,
		NumFragments: 4, NumSmallFragments: 3,
		Lengths:      FragmentLengths{Min: 4, Max: 200_000, Mean: 50_004, P25: 5, P50: 10, P75: 200_000, P99: 200_000},
		NumDataFiles: 4, NumDeletionFiles: 1, PhysicalRows: 200_019, DeletedRows: 2,
	})
	assert.Equal(t, s.Summary()["total_rows"], "200017")
}

// TestRefNameLength: a tag or branch is one file, <name>.json; a name too long for a file name
// is refused as invalid input before anything is written, on a filesystem too (a 5000-character
// tag name used to reach the store and fail as a 500).
func TestRefNameLength(t *testing.T) {
	ctx := context.Background()
	b, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	ds := seed(t, b, NamingV2)

	longest := strings.Repeat("t", MaxRefNameBytes)
	_, err = ds.CreateTag(ctx, longest, 1, "")
	assert.NilError(t, err, "a %d-byte tag name fits a file name", MaxRefNameBytes)
	for _, name := range []string{strings.Repeat("t", MaxRefNameBytes+1), strings.Repeat("t", 5000)} {
		_, err = ds.CreateTag(ctx, name, 1, "")
		assert.Check(t, errors.Is(err, ErrInvalidInput), "%d bytes: %v", len(name), err)
		_, err = ds.GetTag(ctx, name)
		assert.Check(t, errors.Is(err, ErrInvalidInput), "%d bytes: %v", len(name), err)
		assert.Check(t, errors.Is(CheckBranchName(name), ErrInvalidRef), "%d bytes", len(name))
	}
	// A branch's "/" is stored as %2F: three bytes of the file name.
	assert.Check(t, CheckBranchName(strings.Repeat("b/", 62)+"b"))                           // 249 bytes escaped
	assert.Check(t, errors.Is(CheckBranchName(strings.Repeat("b/", 63)+"b"), ErrInvalidRef)) // 253
}
