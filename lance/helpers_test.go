package lance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// testTime is the commit time of version v in test datasets.
func testTime(v uint64) time.Time {
	return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(v) * time.Minute)
}

// fragment builds a fragment with physical rows and (if deleted > 0) a
// deletion file.
func fragment(id, rows, deleted uint64) *tablepb.DataFragment {
	f := &tablepb.DataFragment{
		Id:           id,
		PhysicalRows: rows,
		Files: []*tablepb.DataFile{{
			Path: "0123456789abcdef.lance", Fields: []int32{0, 1}, ColumnIndices: []int32{0, 1},
			FileMajorVersion: 2, FileMinorVersion: 1, FileSizeBytes: 1234,
		}},
	}
	if deleted > 0 {
		f.DeletionFile = &tablepb.DeletionFile{ReadVersion: 2, Id: 77, NumDeletedRows: deleted}
	}
	return f
}

// testManifestFile is a manifest file shaped like what Lance 8.0 writes: an
// index section, an inline transaction and a two-column schema.
func testManifestFile(version uint64, frags ...*tablepb.DataFragment) *ManifestFile {
	details, _ := anypb.New(&tablepb.BTreeIndexDetails{})
	details.TypeUrl = "/lance.table.BTreeIndexDetails" // Lance's form, no type.googleapis.com
	return &ManifestFile{
		Manifest: &tablepb.Manifest{
			Fields: []*filepb.Field{
				{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64", Encoding: filepb.Encoding_PLAIN},
				{Name: "name", Id: 1, ParentId: -1, LogicalType: "string", Nullable: true, Encoding: filepb.Encoding_VAR_BINARY},
			},
			Fragments:       frags,
			Version:         version,
			WriterVersion:   &tablepb.Manifest_WriterVersion{Library: "lance", Version: "8.0.0"},
			Timestamp:       timestamppb.New(testTime(version)),
			MaxFragmentId:   proto.Uint32(uint32(len(frags))),
			TransactionFile: "1-5f5b2fef-7a0e-4bf4-9681-5919d8c8e916.txn",
			DataFormat:      &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
			SchemaMetadata:  map[string][]byte{"b": []byte("2"), "a": []byte("1")},
		},
		Indices: &tablepb.IndexSection{Indices: []*tablepb.IndexMetadata{{
			Uuid: &tablepb.UUID{Uuid: bytes.Repeat([]byte{0xab}, 16)}, Fields: []int32{0}, Name: "id_idx",
			DatasetVersion: version - 1, IndexDetails: details, IndexVersion: proto.Int32(0),
		}}},
		Transaction: &tablepb.Transaction{
			ReadVersion: version - 1,
			Uuid:        "5f5b2fef-7a0e-4bf4-9681-5919d8c8e916",
			Operation:   &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{Fragments: frags}},
		},
	}
}

func encode(t *testing.T, f *ManifestFile) []byte {
	t.Helper()
	data, err := f.Encode()
	assert.NilError(t, err)
	return data
}

func putObject(t *testing.T, store storage.Bucket, key string, data []byte) {
	t.Helper()
	_, err := store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
	assert.NilError(t, err)
}

// datasetWith publishes versions 1..n (with rows 10·v, one fragment each)
// under scheme in a fresh in-memory store.
func datasetWith(t *testing.T, scheme NamingScheme, versions ...uint64) (*Dataset, *storage.Memory) {
	t.Helper()
	store := storage.NewMemory()
	ds := NewDataset(store)
	for _, v := range versions {
		_, err := ds.PutManifest(context.Background(), scheme, testManifestFile(v, fragment(0, 10*v, 0)))
		assert.NilError(t, err)
	}
	return ds, store
}
