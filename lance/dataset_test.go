package lance

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// countingStore counts List requests.
type countingStore struct {
	storage.Bucket
	lists int
}

func (c *countingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	c.lists++
	return c.Bucket.List(ctx, prefix, opts)
}

// junk is what real _versions/ directories hold besides manifests.
var junk = []string{
	"_versions/.tmp_7.manifest_9c100374-3298-4537-afc6-f5ee7913666d",
	"_versions/3.manifest#1",
	"_versions/18446744073709551612.manifest#1",
	"_versions/18446744073709551600.manifest-9c100374-3298-4537-afc6-f5ee7913666d",
	"_versions/d9223372036854775815.manifest", // detached: never the latest
	"_versions/latest_version_hint.json",
	"_versions/nested/1.manifest",
}

func addJunk(t *testing.T, store storage.Bucket) {
	for _, key := range junk {
		putObject(t, store, key, []byte(`{"version":99}`))
	}
}

func TestLatestAndDetection(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []NamingScheme{NamingV1, NamingV2} {
		t.Run(scheme.String(), func(t *testing.T) {
			// 1..12 so V1 names sort differently from numbers ("10" < "2").
			versions := []uint64{1, 2, 3, 5, 8, 9, 10, 11, 12}
			ds, store := datasetWith(t, scheme, versions...)
			addJunk(t, store)

			loc, err := ds.LatestLocation(ctx)
			assert.NilError(t, err)
			assert.Equal(t, loc.Version, uint64(12))
			assert.Equal(t, loc.Scheme, scheme)
			assert.Equal(t, loc.Key, scheme.ManifestKey(12))

			got, err := ds.NamingScheme(ctx)
			assert.NilError(t, err)
			assert.Equal(t, got, scheme)

			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, v.Number(), uint64(12))
			assert.Equal(t, v.Timestamp(), testTime(12))
		})
	}
}

// TestLatestV2IsOneListRequest: with V2 names the newest manifest is listed
// first, so a long history does not cost a long listing: one list request of
// one name, and one more (a page of a few names) when a leftover that sorts
// before the manifests (".tmp…") is there.
func TestLatestV2IsOneListRequest(t *testing.T) {
	var versions []uint64
	for v := uint64(1); v <= 1500; v++ {
		versions = append(versions, v)
	}
	for _, withJunk := range []bool{false, true} {
		_, store := datasetWith(t, NamingV2, versions...)
		putObject(t, store, "_versions/latest_version_hint.json", []byte(`{"version":1500}`))
		wantLists := 1
		if withJunk {
			addJunk(t, store)
			wantLists = 2
		}
		counting := &countingStore{Bucket: store}
		loc, err := NewDataset(counting).LatestLocation(context.Background())
		assert.NilError(t, err)
		assert.Equal(t, loc.Version, uint64(1500))
		assert.Equal(t, counting.lists, wantLists, "junk %v", withJunk)
	}
}

// TestHintNeverTrusted: a stale or bogus hint changes nothing.
func TestHintNeverTrusted(t *testing.T) {
	ctx := context.Background()
	ds, store := datasetWith(t, NamingV2, 1, 2, 3)
	for _, hint := range []uint64{1, 7} {
		assert.NilError(t, WriteVersionHint(ctx, store, hint))
		loc, err := ds.LatestLocation(ctx)
		assert.NilError(t, err)
		assert.Equal(t, loc.Version, uint64(3))
	}
}

func TestDatasetNotFound(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	addJunk(t, store)
	ds := NewDataset(store)
	_, err := ds.LatestLocation(ctx)
	assert.Check(t, errors.Is(err, ErrDatasetNotFound), "got %v", err)
	_, err = ds.OpenLatest(ctx)
	assert.Check(t, errors.Is(err, ErrDatasetNotFound), "got %v", err)
	for _, desc := range []bool{false, true} {
		_, err = ds.ListVersions(ctx, ListVersionsOptions{Descending: desc})
		assert.Check(t, errors.Is(err, ErrDatasetNotFound), "got %v", err)
	}
}

func TestMixedNamingSchemesRefused(t *testing.T) {
	ctx := context.Background()
	ds, _ := datasetWith(t, NamingV1, 1, 2)
	_, err := ds.PutManifest(ctx, NamingV2, testManifestFile(3, fragment(0, 1, 0)))
	assert.NilError(t, err)

	// V1 "1.manifest" sorts before V2 names, so detection takes the full
	// listing and sees both.
	_, err = ds.LatestLocation(ctx)
	assert.Check(t, errors.Is(err, ErrMixedNamingSchemes), "got %v", err)
	_, err = ds.ListVersions(ctx, ListVersionsOptions{})
	assert.Check(t, errors.Is(err, ErrMixedNamingSchemes), "got %v", err)
}

func TestOpenVersion(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []NamingScheme{NamingV1, NamingV2} {
		t.Run(scheme.String(), func(t *testing.T) {
			ds, _ := datasetWith(t, scheme, 1, 2, 4)
			for _, want := range []uint64{1, 2, 4} {
				v, err := ds.OpenVersion(ctx, want)
				assert.NilError(t, err)
				assert.Equal(t, v.Number(), want)
				assert.Equal(t, v.Location.Scheme, scheme)
				assert.Equal(t, v.Manifest().GetVersion(), want)
				assert.Check(t, v.Transaction() != nil)
				assert.Check(t, is.Len(v.Indices(), 1))
				assert.Check(t, is.Len(v.Fields(), 2))
			}
			_, err := ds.OpenVersion(ctx, 3)
			assert.Check(t, errors.Is(err, ErrVersionNotFound), "got %v", err)
		})
	}
}

// A manifest stored under another version's name is corrupt, as in Lance.
func TestOpenVersionMismatch(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	putObject(t, store, NamingV2.ManifestKey(5), encode(t, testManifestFile(4)))
	ds := NewDataset(store)
	_, err := ds.OpenVersion(ctx, 5)
	assert.Check(t, errors.Is(err, ErrCorruptManifest), "got %v", err)
	_, err = ds.ListVersions(ctx, ListVersionsOptions{})
	assert.Check(t, errors.Is(err, ErrCorruptManifest), "got %v", err)
}

func TestPutManifestNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	ds, _ := datasetWith(t, NamingV2, 1, 2)
	_, err := ds.PutManifest(ctx, NamingV2, testManifestFile(2, fragment(0, 999, 0)))
	assert.Check(t, errors.Is(err, ErrVersionExists), "got %v", err)
	v, err := ds.OpenVersion(ctx, 2)
	assert.NilError(t, err)
	assert.Equal(t, v.Fragments()[0].PhysicalRows, uint64(20))
}

func TestListVersions(t *testing.T) {
	all := []uint64{1, 2, 3, 5, 8, 9, 10, 11, 12}
	tests := []struct {
		opts ListVersionsOptions
		want []uint64
	}{
		{ListVersionsOptions{}, all},
		{ListVersionsOptions{Descending: true}, []uint64{12, 11, 10, 9, 8, 5, 3, 2, 1}},
		{ListVersionsOptions{Limit: 3}, []uint64{1, 2, 3}},
		{ListVersionsOptions{Descending: true, Limit: 3}, []uint64{12, 11, 10}},
		{ListVersionsOptions{Start: 4, Limit: 3}, []uint64{5, 8, 9}},
		{ListVersionsOptions{Start: 5, Limit: 2}, []uint64{5, 8}},
		{ListVersionsOptions{Descending: true, Start: 7, Limit: 2}, []uint64{5, 3}},
		{ListVersionsOptions{Descending: true, Start: 9}, []uint64{9, 8, 5, 3, 2, 1}},
		{ListVersionsOptions{Descending: true, Start: 100, Limit: 1}, []uint64{12}},
		{ListVersionsOptions{Start: 13}, nil},
		{ListVersionsOptions{Descending: true, Start: 18446744073709551615, Limit: 1}, []uint64{12}},
	}
	for _, scheme := range []NamingScheme{NamingV1, NamingV2} {
		ds, store := datasetWith(t, scheme, all...)
		addJunk(t, store)
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%v %+v", scheme, tc.opts), func(t *testing.T) {
				got, err := ds.ListVersions(context.Background(), tc.opts)
				assert.NilError(t, err)
				var versions []uint64
				for _, v := range got {
					versions = append(versions, v.Version)
					assert.Equal(t, v.Timestamp, testTime(v.Version))
					assert.Equal(t, v.Key, scheme.ManifestKey(v.Version))
					assert.Check(t, v.Size > 0)
				}
				assert.DeepEqual(t, versions, tc.want)
			})
		}
	}
}

// TestListVersionsV2DescendingPages: paging a long V2 history newest-first
// lists only as far as the page needs.
func TestListVersionsV2DescendingPages(t *testing.T) {
	var versions []uint64
	for v := uint64(1); v <= 2500; v++ {
		versions = append(versions, v)
	}
	_, store := datasetWith(t, NamingV2, versions...)
	counting := &countingStore{Bucket: store}
	got, err := NewDataset(counting).ListVersions(context.Background(), ListVersionsOptions{Descending: true, Start: 1200, Limit: 5})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 5)
	assert.Equal(t, got[0].Version, uint64(1200))
	assert.Equal(t, got[4].Version, uint64(1196))
	assert.Equal(t, counting.lists, 1) // one small page, no separate look-up of the latest
}

func TestFragmentsAndCountRows(t *testing.T) {
	tests := []struct {
		name    string
		frags   []*tablepb.DataFragment
		want    uint64
		wantErr error
	}{
		{"no fragments", nil, 0, nil},
		{"plain", []*tablepb.DataFragment{fragment(0, 100, 0), fragment(1, 50, 0)}, 150, nil},
		{"with deletions", []*tablepb.DataFragment{fragment(0, 100, 10), fragment(3, 50, 49)}, 91, nil},
		{"physical rows not recorded", []*tablepb.DataFragment{fragment(0, 100, 0), fragment(1, 0, 0)}, 0, ErrRowCountUnknown},
		{"deletion count not recorded", []*tablepb.DataFragment{{Id: 1, PhysicalRows: 5, DeletionFile: &tablepb.DeletionFile{Id: 1}}}, 0, ErrRowCountUnknown},
		{"more deleted than present", []*tablepb.DataFragment{fragment(0, 10, 11)}, 0, ErrCorruptManifest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &Version{Location: ManifestLocation{Version: 1}, File: testManifestFile(1, tc.frags...)}
			n, err := v.CountRows()
			if tc.wantErr != nil {
				assert.Check(t, errors.Is(err, tc.wantErr), "got %v", err)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, n, tc.want)
			assert.Equal(t, len(v.Fragments()), len(tc.frags))
		})
	}

	v := &Version{File: testManifestFile(1, fragment(4, 100, 10), fragment(5, 7, 0))}
	assert.DeepEqual(t, v.Fragments(), []FragmentStats{
		{ID: 4, PhysicalRows: 100, DeletedRows: 10, HasDeletionFile: true, RowsKnown: true},
		{ID: 5, PhysicalRows: 7, RowsKnown: true},
	})
}
