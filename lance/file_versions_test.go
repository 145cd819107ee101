package lance

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

// Lance 14 flags a dataset whose fragments hold data files of other 2.x versions than its data
// storage version (reader and writer flag 256, pylance's append with an explicit newer
// data_storage_version). Such a dataset is read (each file by its own version) and written, and
// every commit keeps the flag: a Lance 14 reader refuses the dataset without it.
func TestMixedFileVersionsFlag(t *testing.T) {
	ctx := context.Background()
	ds := NewDataset(storage.NewMemory())
	newer := fragment(1, 10, 0)
	newer.Files[0].FileMinorVersion = 2 // a 2.2 file in a 2.1 dataset
	f := testManifestFile(1, fragment(0, 10, 0), newer)
	f.Manifest.ReaderFeatureFlags, f.Manifest.WriterFeatureFlags = FlagMixedFileVersions, FlagMixedFileVersions
	_, err := ds.PutManifest(ctx, NamingV2, f)
	assert.NilError(t, err)

	v, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"x": Set("1")})
	assert.NilError(t, err)
	assert.Equal(t, v.Manifest().GetReaderFeatureFlags()&FlagMixedFileVersions, FlagMixedFileVersions)
	assert.Equal(t, v.Manifest().GetWriterFeatureFlags()&FlagMixedFileVersions, FlagMixedFileVersions)

	// Computed from the files too, and sticky once set.
	m := testManifestFile(2, fragment(0, 10, 0), newer).Manifest
	setFeatureFlags(m, false)
	assert.Equal(t, m.GetReaderFeatureFlags()&FlagMixedFileVersions, FlagMixedFileVersions)
	m = testManifestFile(2, fragment(0, 10, 0)).Manifest
	setFeatureFlags(m, false)
	assert.Equal(t, m.GetReaderFeatureFlags(), uint64(0))
	m.ReaderFeatureFlags = FlagMixedFileVersions
	setFeatureFlags(m, false)
	assert.Equal(t, m.GetReaderFeatureFlags()&FlagMixedFileVersions, FlagMixedFileVersions)
}

// Data files of a version the reader does not implement are refused by the version the
// manifest records, naming it (406 through the catalog), before any read of the file: Lance 2.3
// (pylance 14 writes it when asked; unstable there) and the legacy format.
func TestUnreadableFileVersionsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		major, minor uint32
		want         string
	}{
		{2, 3, "data file 0123456789abcdef.lance is a Lance 2.3 data file; lancecat reads Lance 2.0, 2.1 and 2.2 data files"},
		{0, 2, "is a Lance 0.1 (legacy) data file"},
		{3, 0, "is a Lance 3.0 data file"},
	} {
		ctx := context.Background()
		ds := NewDataset(storage.NewMemory())
		frag := fragment(0, 10, 0)
		frag.Files[0].FileMajorVersion, frag.Files[0].FileMinorVersion = tc.major, tc.minor
		_, err := ds.PutManifest(ctx, NamingV2, testManifestFile(1, frag))
		assert.NilError(t, err)
		s, err := ds.Scan(ctx, ScanOptions{})
		assert.NilError(t, err)
		for s.Next() {
		}
		err = s.Err()
		s.Release()
		assert.Assert(t, errors.Is(err, ErrUnsupportedFeature), "%v", err)
		assert.Check(t, is.Contains(err.Error(), tc.want))
		_, err = ds.Take(ctx, []uint64{0}, TakeOptions{})
		assert.Assert(t, errors.Is(err, ErrUnsupportedFeature), "%v", err)
	}
}

// Lance 14 records its inline transaction's offset in manifest field 23 (its 21 is
// transaction_section_deprecated). A manifest derived from one of its manifests carried the field
// into a file of another layout, where it pointed at other bytes: Encode drops it (Lance 14 then
// reads 21, which Encode sets) and keeps every other unknown field.
func TestEncodeDropsStaleTransactionOffset(t *testing.T) {
	f := testManifestFile(3, fragment(0, 10, 0))
	var u []byte
	u = protowire.AppendTag(u, 23, protowire.VarintType)
	u = protowire.AppendVarint(u, 964)
	u = protowire.AppendTag(u, 99, protowire.BytesType)
	u = protowire.AppendBytes(u, []byte("kept"))
	f.Manifest.ProtoReflect().SetUnknown(u)
	data, err := f.Encode()
	assert.NilError(t, err)
	got, err := DecodeManifestFile(data)
	assert.NilError(t, err)
	var want []byte
	want = protowire.AppendTag(want, 99, protowire.BytesType)
	want = protowire.AppendBytes(want, []byte("kept"))
	assert.DeepEqual(t, []byte(got.Manifest.ProtoReflect().GetUnknown()), want)
	assert.Assert(t, got.Manifest.TransactionSection != nil)
	assert.Equal(t, got.Transaction.GetUuid(), f.Transaction.GetUuid())
}
