package lance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// age sets a file's modification time, as if it had been written at t.
func age(t *testing.T, store *storage.FS, key string, at time.Time) {
	t.Helper()
	assert.NilError(t, os.Chtimes(filepath.Join(store.Root(), filepath.FromSlash(key)), at, at))
}

// TestCleanupUnverified: files no manifest references go only when they
// predate the earliest kept version and the unverified age (an in-flight
// writer's files must survive); sidecars follow their data file; leftovers
// of versions cleaned long ago (their .txn files) are pruned.
func TestCleanupUnverified(t *testing.T) {
	ctx := context.Background()
	ds, bucket := cleanupFixture(t)
	store := bucket.(*storage.FS)
	old := testTime(0).Add(-30 * 24 * time.Hour)
	for _, k := range []string{"data/abandoned.lance", "_transactions/0-cleaned-long-ago.txn", "_versions/.tmp-crashed", "_deletions/9-1-1.arrow", "_indices/99999999-9999-9999-9999-999999999999/part.idx"} {
		putObject(t, store, k, []byte("leftover"))
		age(t, store, k, old)
	}
	putObject(t, store, "data/c/00000001.blob", []byte("sidecar of a kept file"))
	age(t, store, "data/c/00000001.blob", old)
	putObject(t, store, "data/x/00000001.blob", []byte("sidecar of a removed file"))
	putObject(t, store, "foreign/readme.txt", []byte("not ours"))
	age(t, store, "foreign/readme.txt", old)

	tests := []struct {
		name     string
		now      time.Time
		wantGone []string
		wantKept []string
	}{
		{
			name:     "a week after the leftovers",
			now:      old.Add(8 * 24 * time.Hour),
			wantGone: []string{"data/abandoned.lance", "_transactions/0-cleaned-long-ago.txn", "_versions/.tmp-crashed", "_deletions/9-1-1.arrow", "_indices/99999999-9999-9999-9999-999999999999/part.idx", "data/x/00000001.blob", "data/x.lance"},
			wantKept: []string{"data/c/00000001.blob", "foreign/readme.txt", "data/orphan.lance", "data/c.lance"},
		},
		{
			name: "a day after the leftovers",
			now:  old.Add(24 * time.Hour),
			// The transaction file of a writer that read v0 goes at once: v1 is cleaned, so that
			// writer can no longer commit (staleTransaction).
			wantGone: []string{"data/x/00000001.blob", "data/x.lance", "_transactions/0-cleaned-long-ago.txn"},
			wantKept: []string{"data/abandoned.lance", "_versions/.tmp-crashed", "data/orphan.lance"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := ds.Cleanup(ctx, CleanupOptions{KeepLast: 2, Now: tt.now, DryRun: true})
			assert.NilError(t, err)
			for _, k := range tt.wantGone {
				assert.Check(t, slices.Contains(rep.RemovedFiles, k), k)
			}
			for _, k := range tt.wantKept {
				assert.Check(t, !slices.Contains(rep.RemovedFiles, k), k)
			}
			assert.Check(t, rep.UnverifiedKept > 0, "the fixture's young orphan is counted")
		})
	}
	rep, err := ds.Cleanup(ctx, CleanupOptions{KeepLast: 2, Now: old.Add(8 * 24 * time.Hour)})
	assert.NilError(t, err)
	assert.Check(t, rep.UnverifiedRemoved >= 4) // the stale transaction file is not "unverified"
	after := keys(t, store)
	assert.Check(t, slices.Contains(after, "data/c/00000001.blob"))
	assert.Check(t, !slices.Contains(after, "data/abandoned.lance"))
}

// TestCleanupRefusesUnknownFeatures: a manifest with a feature flag we do
// not know might reference files in ways we cannot see; nothing is touched.
func TestCleanupRefusesUnknownFeatures(t *testing.T) {
	ctx := context.Background()
	ds, store := cleanupFixture(t)
	f := testManifestFile(6, frag(3, "c.lance", 0))
	f.Manifest.WriterFeatureFlags |= 1 << 20
	_, err := ds.PutManifest(ctx, NamingV2, f)
	assert.NilError(t, err)
	before := keys(t, store)
	_, err = ds.Cleanup(ctx, CleanupOptions{KeepLast: 1, UnverifiedAge: -1})
	assert.Check(t, errors.Is(err, ErrUnsupportedFeature), err)
	assert.DeepEqual(t, keys(t, store), before)
}

// failingDeletes is a fake for fault injection only: it fails the Nth
// Delete (1-based) and every one after it, as a process killed there would
// stop deleting.
type failingDeletes struct {
	storage.Bucket
	n, calls int
}

var errDeleteInjected = errors.New("injected delete failure")

func (f *failingDeletes) Delete(ctx context.Context, key string) error {
	f.calls++
	if f.calls >= f.n {
		return errDeleteInjected
	}
	return f.Bucket.Delete(ctx, key)
}

// TestCleanupInterrupted stops cleanup at every delete it makes (a crash
// there): every kept version stays readable with all its files, and the
// next run ends where an uninterrupted run would have.
func TestCleanupInterrupted(t *testing.T) {
	ctx := context.Background()
	ref, refStore := cleanupFixture(t)
	want, err := ref.Cleanup(ctx, CleanupOptions{KeepLast: 1})
	assert.NilError(t, err)
	wantKeys := keys(t, refStore)
	for n := 1; n <= len(want.RemovedFiles); n++ {
		t.Run(fmt.Sprint("fail delete ", n), func(t *testing.T) {
			_, store := cleanupFixture(t)
			faulty := &failingDeletes{Bucket: store, n: n}
			ds := NewDatasetAt(faulty, store.(*storage.FS).Root())
			_, err := ds.Cleanup(ctx, CleanupOptions{KeepLast: 1})
			assert.Check(t, errors.Is(err, errDeleteInjected))
			for _, v := range want.KeptVersions {
				ver, err := ds.OpenVersion(ctx, v)
				assert.NilError(t, err)
				for _, f := range ver.Manifest().GetFragments() {
					_, err := store.Stat(ctx, DataDir+f.Files[0].GetPath())
					assert.NilError(t, err, "version %d lost %s", v, f.Files[0].GetPath())
				}
			}
			again := NewDatasetAt(store, store.(*storage.FS).Root())
			_, err = again.Cleanup(ctx, CleanupOptions{KeepLast: 1})
			assert.NilError(t, err)
			// The branch's own files (named with random ids) are not ours to compare.
			outside := func(k string) bool { return strings.HasPrefix(k, "tree/") }
			assert.DeepEqual(t, slices.DeleteFunc(keys(t, store), outside), slices.DeleteFunc(slices.Clone(wantKeys), outside))
		})
	}
}
