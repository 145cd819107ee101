package lance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/buildinfo"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// stores returns a fresh store of every backend the commit path must work on.
func stores(t *testing.T) map[string]storage.Bucket {
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	return map[string]storage.Bucket{"fs": fs, "memory": storage.NewMemory()}
}

// seed publishes version 1 (two columns, one fragment, one index) on store.
func seed(t *testing.T, store storage.Bucket, scheme NamingScheme) *Dataset {
	t.Helper()
	ds := NewDataset(store)
	_, err := ds.PutManifest(context.Background(), scheme, testManifestFile(1, fragment(0, 10, 0)))
	assert.NilError(t, err)
	return ds
}

func TestConcurrentMetadataCommits(t *testing.T) {
	const writers = 8
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ds := seed(t, store, NamingV2)
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for i := range writers {
				wg.Go(func() {
					_, errs[i] = ds.UpdateSchemaMetadata(ctx, MetadataUpdate{fmt.Sprintf("k%d", i): Set(fmt.Sprint(i))})
				})
			}
			wg.Wait()
			for _, err := range errs {
				assert.NilError(t, err)
			}
			versions, err := ds.ListVersions(ctx, ListVersionsOptions{})
			assert.NilError(t, err)
			assert.Equal(t, len(versions), writers+1)
			for i, v := range versions {
				assert.Equal(t, v.Version, uint64(i+1), "versions are consecutive")
			}
			latest, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			md := latest.Manifest().GetSchemaMetadata()
			for i := range writers {
				assert.Equal(t, string(md[fmt.Sprintf("k%d", i)]), fmt.Sprint(i), "nothing lost")
			}
			assert.Equal(t, string(md["a"]), "1", "existing keys kept")
			// Every version records its transaction inline and in _transactions/.
			for v := uint64(2); v <= latest.Number(); v++ {
				ver, err := ds.OpenVersion(ctx, v)
				assert.NilError(t, err)
				assert.Equal(t, OperationName(ver.Transaction()), "UpdateConfig")
				data, err := readObject(ctx, store, TransactionsDir+ver.Manifest().GetTransactionFile(), 1<<20)
				assert.NilError(t, err)
				fromFile := &tablepb.Transaction{}
				assert.NilError(t, proto.Unmarshal(data, fromFile))
				assert.Check(t, proto.Equal(fromFile, ver.Transaction()))
				assert.Check(t, strings.HasPrefix(ver.Manifest().GetTransactionFile(), fmt.Sprint(fromFile.GetReadVersion())+"-"))
			}
			hint, ok, err := ReadVersionHint(ctx, store)
			assert.NilError(t, err)
			assert.Check(t, ok)
			assert.Check(t, hint <= latest.Number())
		})
	}
}

func TestCommitConflicts(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		first    Operation
		second   Operation
		conflict bool
	}{
		{"same schema key", &UpdateConfig{SchemaMetadata: MetadataUpdate{"x": Set("1")}}, &UpdateConfig{SchemaMetadata: MetadataUpdate{"x": nil}}, true},
		{"different schema keys", &UpdateConfig{SchemaMetadata: MetadataUpdate{"x": Set("1")}}, &UpdateConfig{SchemaMetadata: MetadataUpdate{"y": Set("2")}}, false},
		{"same field key", &UpdateConfig{FieldMetadata: map[string]MetadataUpdate{"id": {"x": Set("1")}}}, &UpdateConfig{FieldMetadataByID: map[int32]MetadataUpdate{0: {"x": Set("2")}}}, true},
		{"config vs schema", &UpdateConfig{Config: MetadataUpdate{"x": Set("1")}}, &UpdateConfig{SchemaMetadata: MetadataUpdate{"x": Set("2")}}, false},
		{"restore then metadata", &Restore{Version: 1}, &UpdateConfig{SchemaMetadata: MetadataUpdate{"y": Set("2")}}, false},
		{"restore then project", &Restore{Version: 1}, &Project{Drop: []string{"name"}}, true},
		{"project then project", &Project{Alter: []ColumnAlteration{{Path: "id", Rename: Set("key")}}}, &Project{Drop: []string{"name"}}, true},
		{"metadata then project", &UpdateConfig{TableMetadata: MetadataUpdate{"t": Set("1")}}, &Project{Drop: []string{"name"}}, false},
		{"project then restore", &Project{Drop: []string{"name"}}, &Restore{Version: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := seed(t, storage.NewMemory(), NamingV2)
			_, err := ds.Commit(ctx, tt.first, CommitOptions{})
			assert.NilError(t, err)
			// second was prepared against version 1, before first landed.
			v, err := ds.Commit(ctx, tt.second, CommitOptions{ReadVersion: 1})
			if tt.conflict {
				// ErrCommitConflict answers ConcurrentModification (errors.TestSentinelTable).
				assert.Check(t, errors.Is(err, ErrCommitConflict), "%v", err)
				var le *Error
				assert.Check(t, errors.As(err, &le) && le.Kind == ErrCommitConflict, "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, v.Number(), uint64(3))
			assert.Equal(t, v.Transaction().GetReadVersion(), uint64(1))
		})
	}
}

// TestCommitSeesOtherScheme: a manifest for the next version under the other
// naming scheme counts as taken.
func TestCommitSeesOtherScheme(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := seed(t, store, NamingV2)
	putObject(t, store, NamingV1.ManifestKey(2), encode(t, testManifestFile(2)))
	_, err := ds.Commit(ctx, &UpdateConfig{SchemaMetadata: MetadataUpdate{"x": Set("1")}}, CommitOptions{MaxRetries: 2})
	assert.Check(t, errors.Is(err, ErrCommitConflict), "%v", err)
	_, err = store.Stat(ctx, NamingV2.ManifestKey(2))
	assert.Check(t, errors.Is(err, storage.ErrNotFound))
}

// failingStore fails writes of keys matching fail.
type failingStore struct {
	storage.Bucket
	fail func(key string) bool
}

var errInjected = errors.New("injected failure")

func (f *failingStore) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if f.fail(key) {
		return storage.ObjectInfo{}, errInjected
	}
	return f.Bucket.Put(ctx, key, r, size)
}

func (f *failingStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if f.fail(key) {
		return storage.ObjectInfo{}, errInjected
	}
	return f.Bucket.PutIfAbsent(ctx, key, r, size)
}

// TestCommitCrashPoints: a failure at any step leaves the dataset readable
// at its last committed version, and a later commit succeeds.
func TestCommitCrashPoints(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		fail      func(string) bool
		committed bool
	}{
		{"transaction file", func(k string) bool { return strings.HasPrefix(k, TransactionsDir) }, false},
		{"manifest", func(k string) bool { return strings.HasSuffix(k, ".manifest") }, false},
		{"version hint", func(k string) bool { return k == VersionHintKey }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := storage.NewMemory()
			seed(t, store, NamingV2)
			broken := NewDataset(&failingStore{Bucket: store, fail: tt.fail})
			_, err := broken.UpdateSchemaMetadata(ctx, MetadataUpdate{"x": Set("1")})
			ds := NewDataset(store)
			latest, lerr := ds.OpenLatest(ctx)
			assert.NilError(t, lerr)
			if tt.committed {
				assert.NilError(t, err)
				assert.Equal(t, latest.Number(), uint64(2))
			} else {
				assert.Check(t, errors.Is(err, errInjected))
				assert.Equal(t, latest.Number(), uint64(1))
			}
			v, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"y": Set("1")})
			assert.NilError(t, err)
			assert.Equal(t, v.Number(), latest.Number()+1)
		})
	}
}

func TestMetadataOperations(t *testing.T) {
	ctx := context.Background()
	ds := seed(t, storage.NewMemory(), NamingV1)

	v, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"a": nil, "c": Set("3")})
	assert.NilError(t, err)
	assert.DeepEqual(t, v.Manifest().GetSchemaMetadata(), map[string][]byte{"b": []byte("2"), "c": []byte("3")})
	assert.Equal(t, v.Location.Scheme, NamingV1, "commits follow the dataset's scheme")
	assert.Equal(t, v.Manifest().GetWriterVersion().GetLibrary(), WriterLibrary)
	// This build's version, as semver (a test binary is a "dev" build: 0.0.0-dev...).
	assert.Equal(t, v.Manifest().GetWriterVersion().GetVersion(), buildinfo.Get().Semver())
	assert.Assert(t, strings.HasPrefix(WriterVersion, "0.0.0-dev"), WriterVersion)

	v, err = ds.UpdateFieldMetadata(ctx, "name", MetadataUpdate{"lance-encoding:compression": Set("zstd")})
	assert.NilError(t, err)
	assert.Equal(t, string(FieldByID(v.Fields(), 1).GetMetadata()["lance-encoding:compression"]), "zstd")
	uc := v.Transaction().GetUpdateConfig()
	assert.Equal(t, uc.GetFieldMetadataUpdates()[1].GetUpdateEntries()[0].GetValue(), "zstd")

	_, err = ds.UpdateFieldMetadata(ctx, "nope", MetadataUpdate{"x": Set("1")})
	assert.Check(t, errors.Is(err, ErrColumnNotFound))

	v, err = ds.UpdateTableMetadata(ctx, MetadataUpdate{"owner": Set("me")})
	assert.NilError(t, err)
	assert.DeepEqual(t, v.Manifest().GetTableMetadata(), map[string]string{"owner": "me"})

	v, err = ds.AlterColumns(ctx, ColumnAlteration{Path: "name", Rename: Set("label")}, ColumnAlteration{Path: "id", Nullable: proto.Bool(true)})
	assert.NilError(t, err)
	assert.Equal(t, OperationName(v.Transaction()), "Project")
	assert.Equal(t, FieldByID(v.Fields(), 1).GetName(), "label")
	assert.Check(t, FieldByID(v.Fields(), 0).GetNullable())
	assert.Equal(t, len(v.Transaction().GetProject().GetSchema()), 2)

	_, err = ds.AlterColumns(ctx, ColumnAlteration{Path: "id", Nullable: proto.Bool(false)})
	assert.Check(t, errors.Is(err, ErrInvalidInput))
	_, err = ds.AlterColumns(ctx, ColumnAlteration{Path: "id", Rename: Set("label")})
	assert.Check(t, errors.Is(err, ErrInvalidInput))

	// Dropping the indexed column drops the index and, since the test data
	// file holds both columns, keeps the file.
	v, err = ds.DropColumns(ctx, "id")
	assert.NilError(t, err)
	assert.Equal(t, len(v.Fields()), 1)
	assert.Check(t, is.Len(v.Indices(), 0))
	assert.Check(t, v.File.Indices == nil)
	assert.Equal(t, len(v.Manifest().GetFragments()[0].GetFiles()), 1)
	_, err = ds.DropColumns(ctx, "label")
	assert.Check(t, errors.Is(err, ErrInvalidInput), "cannot drop every column")

	restored, err := ds.RestoreVersion(ctx, 1)
	assert.NilError(t, err)
	assert.Equal(t, restored.Number(), v.Number()+1)
	assert.Equal(t, restored.Transaction().GetRestore().GetVersion(), uint64(1))
	assert.Equal(t, len(restored.Fields()), 2)
	assert.Equal(t, len(restored.Indices()), 1)
	assert.DeepEqual(t, restored.Manifest().GetSchemaMetadata(), map[string][]byte{"a": []byte("1"), "b": []byte("2")})

	_, err = ds.RestoreVersion(ctx, 99)
	assert.Check(t, errors.Is(err, ErrVersionNotFound))
}

func TestRefusesUnknownFeatureFlags(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := NewDataset(store)
	f := testManifestFile(1)
	f.Manifest.WriterFeatureFlags = 1 << 40 // 256 is Lance 14's mixed file versions, known now
	_, err := ds.PutManifest(ctx, NamingV2, f)
	assert.NilError(t, err)
	_, err = ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"x": Set("1")})
	assert.Check(t, errors.Is(err, ErrUnsupportedFeature))
}

func TestDropNestedColumn(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := NewDataset(store)
	f := testManifestFile(1, fragment(0, 5, 0))
	f.Manifest.Fields = append(f.Manifest.Fields,
		&filepb.Field{Name: "s", Id: 2, ParentId: -1, LogicalType: "struct"},
		&filepb.Field{Name: "x", Id: 3, ParentId: 2, LogicalType: "int32"},
		&filepb.Field{Name: "y", Id: 4, ParentId: 2, LogicalType: "int32"},
	)
	f.Manifest.Fragments[0].Files = append(f.Manifest.Fragments[0].Files, &tablepb.DataFile{Path: "s.lance", Fields: []int32{3, 4}, ColumnIndices: []int32{0, 1}})
	_, err := ds.PutManifest(ctx, NamingV2, f)
	assert.NilError(t, err)

	v, err := ds.DropColumns(ctx, "s.x")
	assert.NilError(t, err)
	assert.Equal(t, len(v.Fields()), 4)
	assert.Equal(t, len(v.Manifest().GetFragments()[0].GetFiles()), 2)
	v, err = ds.DropColumns(ctx, "s")
	assert.NilError(t, err)
	assert.Equal(t, len(v.Fields()), 2)
	assert.Equal(t, len(v.Manifest().GetFragments()[0].GetFiles()), 1, "the struct's file is no longer referenced")
}
