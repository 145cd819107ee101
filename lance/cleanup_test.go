package lance

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// frag is a fragment of one data file, optionally with a deletion file.
func frag(id uint64, path string, delID uint64) *tablepb.DataFragment {
	f := fragment(id, 10, 0)
	f.Files[0].Path = path
	if delID != 0 {
		f.DeletionFile = &tablepb.DeletionFile{ReadVersion: delID, Id: delID, NumDeletedRows: 1}
	}
	return f
}

func indexWith(b byte) *tablepb.IndexMetadata {
	return &tablepb.IndexMetadata{Uuid: &tablepb.UUID{Uuid: bytes.Repeat([]byte{b}, 16)}, Fields: []int32{0}, Name: "id_idx"}
}

// cleanupFixture: five versions with files that come and go, a tag on 2, a
// branch forked from 3, and an orphan file no manifest references.
//
//	v1: x.lance                       index 01  (everything here is v1-only)
//	v2: a.lance                       index 02  tagged
//	v3: a.lance+del(3), b.lance       index 03  branch fork point
//	v4: b.lance, c.lance              index 04
//	v5: c.lance                       index 04  latest
func cleanupFixture(t *testing.T) (*Dataset, storage.Bucket) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ds := NewDatasetAt(store, dir)
	type spec struct {
		frags []*tablepb.DataFragment
		index byte
	}
	specs := []spec{
		{[]*tablepb.DataFragment{frag(0, "x.lance", 0)}, 1},
		{[]*tablepb.DataFragment{frag(1, "a.lance", 0)}, 2},
		{[]*tablepb.DataFragment{frag(1, "a.lance", 3), frag(2, "b.lance", 0)}, 3},
		{[]*tablepb.DataFragment{frag(2, "b.lance", 0), frag(3, "c.lance", 0)}, 4},
		{[]*tablepb.DataFragment{frag(3, "c.lance", 0)}, 4},
	}
	for i, s := range specs {
		v := uint64(i + 1)
		f := testManifestFile(v, s.frags...)
		f.Indices.Indices = []*tablepb.IndexMetadata{indexWith(s.index)}
		f.Manifest.TransactionFile = "txn" + string(rune('0'+v)) + ".txn"
		_, err := ds.PutManifest(ctx, NamingV2, f)
		assert.NilError(t, err)
		putObject(t, store, TransactionsDir+f.Manifest.TransactionFile, []byte("t"))
		for _, fr := range s.frags {
			putObject(t, store, DataDir+fr.Files[0].Path, []byte("data"))
			if fr.DeletionFile != nil {
				putObject(t, store, DeletionFileKey(fr.Id, fr.DeletionFile), []byte("del"))
			}
		}
		putObject(t, store, IndexDir(f.Indices.Indices[0])+"index.idx", []byte("idx"))
	}
	putObject(t, store, DataDir+"orphan.lance", []byte("in-flight write"))
	_, err = ds.CreateTag(ctx, "keep", 2, "")
	assert.NilError(t, err)
	_, _, err = ds.CreateBranch(ctx, "dev", "", 3)
	assert.NilError(t, err)
	return ds, store
}

func keys(t *testing.T, store storage.Bucket) []string {
	objs, err := listAll(context.Background(), store, "")
	assert.NilError(t, err)
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

func TestCleanup(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		opts         CleanupOptions
		removed      []uint64
		removedFiles []string
	}{
		{
			name:    "keep last 1",
			opts:    CleanupOptions{KeepLast: 1},
			removed: []uint64{1, 4},
			removedFiles: []string{
				NamingV2.ManifestKey(1), NamingV2.ManifestKey(4),
				"_indices/01010101-0101-0101-0101-010101010101/index.idx",
				"_transactions/txn1.txn", "_transactions/txn4.txn",
				"data/x.lance",
			},
		},
		{
			name:    "keep last 2",
			opts:    CleanupOptions{KeepLast: 2},
			removed: []uint64{1},
			removedFiles: []string{
				NamingV2.ManifestKey(1),
				"_indices/01010101-0101-0101-0101-010101010101/index.idx",
				"_transactions/txn1.txn", "data/x.lance",
			},
		},
		{
			name:    "older than version 5",
			opts:    CleanupOptions{OlderThan: testTime(5)},
			removed: []uint64{1, 4},
			removedFiles: []string{
				NamingV2.ManifestKey(1), NamingV2.ManifestKey(4),
				"_indices/01010101-0101-0101-0101-010101010101/index.idx",
				"_transactions/txn1.txn", "_transactions/txn4.txn",
				"data/x.lance",
			},
		},
		{
			name:    "older than version 1",
			opts:    CleanupOptions{OlderThan: testTime(1)},
			removed: nil,
		},
	}
	for _, tt := range tests {
		for _, dry := range []bool{true, false} {
			name := tt.name
			if dry {
				name += " dry run"
			}
			t.Run(name, func(t *testing.T) {
				ds, store := cleanupFixture(t)
				before := keys(t, store)
				opts := tt.opts
				opts.DryRun = dry
				rep, err := ds.Cleanup(ctx, opts)
				assert.NilError(t, err)
				assert.DeepEqual(t, rep.RemovedVersions, tt.removed)
				got := slices.Clone(rep.RemovedFiles)
				slices.Sort(got)
				want := slices.Clone(tt.removedFiles)
				slices.Sort(want)
				assert.DeepEqual(t, got, want)
				after := keys(t, store)
				if dry {
					assert.DeepEqual(t, after, before)
					return
				}
				for _, k := range tt.removedFiles {
					assert.Check(t, !slices.Contains(after, k), k)
				}
				assert.Equal(t, len(after), len(before)-len(tt.removedFiles))
				assert.Check(t, slices.Contains(after, "data/orphan.lance"), "unreferenced files are never touched")
				// Everything kept still opens, the branch too.
				for _, v := range rep.KeptVersions {
					_, err := ds.OpenVersion(ctx, v)
					assert.NilError(t, err)
				}
				br, _ := ds.Branch("dev")
				bv, err := br.OpenLatest(ctx)
				assert.NilError(t, err)
				for _, f := range bv.Manifest().GetFragments() {
					assert.Check(t, slices.Contains(after, DataDir+f.Files[0].GetPath()))
				}
			})
		}
	}
}

func TestCleanupNeedsCriteria(t *testing.T) {
	ds, _ := cleanupFixture(t)
	_, err := ds.Cleanup(context.Background(), CleanupOptions{})
	assert.Check(t, errors.Is(err, ErrInvalidInput))
}

func TestDeleteVersions(t *testing.T) {
	ctx := context.Background()
	ds, store := cleanupFixture(t)
	deleted, skipped, err := ds.DeleteVersions(ctx, []VersionRange{{Start: 0, End: -1}})
	assert.NilError(t, err)
	assert.DeepEqual(t, deleted, []uint64{1, 4})
	assert.DeepEqual(t, skipped, []uint64{2, 3, 5})
	list, err := ds.ListVersions(ctx, ListVersionsOptions{})
	assert.NilError(t, err)
	assert.Check(t, is.Len(list, 3))
	// Data stays: deleting versions only removes history records.
	assert.Check(t, slices.Contains(keys(t, store), "data/x.lance"))

	ds, _ = cleanupFixture(t)
	deleted, skipped, err = ds.DeleteVersions(ctx, []VersionRange{{Start: 1, End: 2}, {Start: 4, End: 5}})
	assert.NilError(t, err)
	assert.DeepEqual(t, deleted, []uint64{1, 4})
	assert.Check(t, is.Len(skipped, 0))
}
