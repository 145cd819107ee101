package maintenance

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// plant writes key under ds's root with modification time mod.
func plant(t *testing.T, root string, store storage.Bucket, key string, mod time.Time) {
	t.Helper()
	_, err := store.Put(context.Background(), key, bytes.NewReader([]byte("x")), 1)
	assert.NilError(t, err)
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, _ error) error {
		if d != nil && !d.IsDir() && strings.HasSuffix(filepath.ToSlash(p), "/"+key) {
			found = p
		}
		return nil
	})
	assert.Assert(t, found != "", key)
	assert.NilError(t, os.Chtimes(found, mod, mod))
}

func keysOf(fs []OrphanFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Key+"="+f.Action)
	}
	slices.Sort(out)
	return out
}

// TestOrphanScanAndRepair: the scan reports an old stray data file (delete), a young one (a
// writer that has not committed: no action) and a foreign object (no action), and never the
// objects it must not report (tags, reserved markers, the version hint, our _maintenance/, blob
// sidecars of referenced data files, manifests, referenced files). Repair deletes only the old
// stray, the table reads the same rows, one orphans_removed event is recorded, and a second
// repair finds nothing to do.
func TestOrphanScanAndRepair(t *testing.T) {
	ctx := context.Background()
	dir, ns := sweepRoot(t, 2, 3)
	events := &countingEvents{}
	s := &Service{Catalog: ns, Holder: "r1", Events: events}
	id := ident.ID{"t0000"}
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, _ := tbl.Dataset()
	before := liveRows(t, ds)
	v := head(t, ds)
	stem := strings.TrimSuffix(v.Manifest().GetFragments()[0].GetFiles()[0].GetPath(), ".lance")
	old := time.Now().Add(-30 * 24 * time.Hour)
	store := ds.Store()
	plant(t, dir, store, "data/stray-old.lance", old)
	plant(t, dir, store, "data/stray-young.lance", time.Now())
	plant(t, dir, store, "notes.txt", old)
	plant(t, dir, store, "_refs/tags/keep.json", old)
	plant(t, dir, store, "data/.lance-reserved", old)
	plant(t, dir, store, "_maintenance/whatever", old)
	plant(t, dir, store, "data/"+stem+"/blob-0.bin", old)

	rep, err := s.ScanOrphans(ctx, OrphanOptions{Under: id})
	assert.NilError(t, err)
	assert.Equal(t, rep.Checked, 1, "%+v", rep.Refused)
	assert.DeepEqual(t, keysOf(rep.Findings), []string{"data/stray-old.lance=delete", "data/stray-young.lance=none", "notes.txt=none"})
	assert.Assert(t, len(rep.Skipped) > 0, "the categories not checked are said")

	// Repair without a cleared report deletes nothing; with it, only the old stray.
	none, err := s.Reconcile(ctx, OrphanReport{}, false, OrphanOptions{Under: id})
	assert.NilError(t, err)
	assert.Equal(t, len(none.Removed), 0)
	fixed, err := s.Reconcile(ctx, rep, false, OrphanOptions{Under: id})
	assert.NilError(t, err)
	assert.DeepEqual(t, keysOf(fixed.Removed), []string{"data/stray-old.lance=delete"})
	_, err = store.Stat(ctx, "data/stray-old.lance")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	for _, k := range []string{"data/stray-young.lance", "notes.txt", "_refs/tags/keep.json", "data/" + stem + "/blob-0.bin"} {
		_, err := store.Stat(ctx, k)
		assert.NilError(t, err, k)
	}
	assert.DeepEqual(t, liveRows(t, ds), before)
	assert.Equal(t, events.n[EventOrphansRemoved], 1)
	again, err := s.Reconcile(ctx, rep, false, OrphanOptions{Under: id})
	assert.NilError(t, err)
	assert.Equal(t, len(again.Removed), 0)
	assert.Equal(t, events.n[EventOrphansRemoved], 1, "no material work, no event")
}

// TestRepairRefusesCraftedFindings: a report is only a filter on what the fresh scan finds, so
// a crafted report naming files outside the table root, a referenced data file, a manifest or
// a path with ".." deletes nothing; and a crafted object name is never a managed key.
func TestRepairRefusesCraftedFindings(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 2, 2)
	s := &Service{Catalog: ns, Holder: "r1"}
	tbl, err := ns.LoadTable(ctx, ident.ID{"t0000"})
	assert.NilError(t, err)
	ds, _ := tbl.Dataset()
	v := head(t, ds)
	ref := "data/" + v.Manifest().GetFragments()[0].GetFiles()[0].GetPath()
	old := time.Now().Add(-30 * 24 * time.Hour)
	var crafted OrphanReport
	for _, key := range []string{ref, v.Location.Key, "../t0001/" + ref, "/etc/passwd", "data/../../t0001/" + ref, "_versions/../" + ref} {
		for _, table := range [][]string{{"t0000"}, {"t0001"}} {
			crafted.Findings = append(crafted.Findings, OrphanFinding{Table: table, Key: key, Action: "delete", ModTime: old})
		}
	}
	other, err := ns.LoadTable(ctx, ident.ID{"t0001"})
	assert.NilError(t, err)
	ods, _ := other.Dataset()
	beforeA, beforeB := liveRows(t, ds), liveRows(t, ods)
	rep, err := s.Reconcile(ctx, crafted, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(rep.Removed), 0)
	assert.DeepEqual(t, liveRows(t, ds), beforeA)
	assert.DeepEqual(t, liveRows(t, ods), beforeB)

	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"data/x.lance", true}, {"_indices/u/part.lance", true}, {"_transactions/1-u.txn", true},
		{"_deletions/1-2-3.arrow", true}, {"_versions/.tmp-1", true},
		{"data/../x", false}, {"/data/x", false}, {"data/./x", false}, {"data/", false}, {"data//x", false},
		{"_versions/1.manifest", false}, {"_refs/tags/a.json", false}, {"notes.txt", false}, {"", false},
	} {
		assert.Equal(t, managedKey(tc.key), tc.want, tc.key)
	}
}
