package lance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

func seq(from, n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = from + uint32(i)
	}
	return out
}

func TestDeletionVectorRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rows []uint32
		typ  tablepb.DeletionFile_DeletionFileType
	}{
		{"one row", []uint32{7}, tablepb.DeletionFile_ARROW_ARRAY},
		{"unsorted", []uint32{9, 3, 5, 1}, tablepb.DeletionFile_ARROW_ARRAY},
		{"at threshold", seq(0, BitmapThreshold), tablepb.DeletionFile_ARROW_ARRAY},
		{"past threshold", seq(0, BitmapThreshold+1), tablepb.DeletionFile_BITMAP},
		{"large sparse", append(seq(0, 6000), 1<<31), tablepb.DeletionFile_BITMAP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dv := NewDeletionVector(tt.rows...)
			assert.Equal(t, dv.FileType(), tt.typ)
			data, err := EncodeDeletionVector(dv)
			assert.NilError(t, err)
			back, err := DecodeDeletionFile(tt.typ, data)
			assert.NilError(t, err)
			assert.DeepEqual(t, back.Rows(), dv.Rows())
			assert.Equal(t, back.FileType(), tt.typ)
		})
	}
}

func TestBitmapBytesMatchRoaring(t *testing.T) {
	// Lance writes the portable serialization; so must we, byte for byte.
	rows := seq(100, 6667)
	bm := roaring.BitmapOf(rows...)
	var want bytes.Buffer
	_, err := bm.WriteTo(&want)
	assert.NilError(t, err)
	got, err := EncodeDeletionVector(NewDeletionVector(rows...))
	assert.NilError(t, err)
	assert.Check(t, bytes.Equal(got, want.Bytes()))
}

func arrowFile(t *testing.T, schema *arrow.Schema, batches ...arrow.Array) []byte {
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, err)
	for _, a := range batches {
		rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

func TestDeletionFileRejects(t *testing.T) {
	mem := memory.DefaultAllocator
	u32 := func(valid []bool, v ...uint32) arrow.Array {
		b := array.NewUint32Builder(mem)
		b.AppendValues(v, valid)
		return b.NewArray()
	}
	i32 := array.NewInt32Builder(mem)
	i32.AppendValues([]int32{1}, nil)
	nullable := arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Uint32, Nullable: true}}, nil)
	tests := []struct {
		name string
		data []byte
	}{
		{"wrong type", arrowFile(t, arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Int32}}, nil), i32.NewArray())},
		{"wrong name", arrowFile(t, arrow.NewSchema([]arrow.Field{{Name: "rowid", Type: arrow.PrimitiveTypes.Uint32}}, nil), u32(nil, 1))},
		{"nullable", arrowFile(t, nullable, u32([]bool{true, false}, 1, 2))},
		{"two batches", arrowFile(t, deletionSchema, u32(nil, 1), u32(nil, 2))},
		{"garbage", []byte("ARROW1\x00\x00garbage")},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeDeletionFile(tablepb.DeletionFile_ARROW_ARRAY, tt.data)
			assert.Check(t, errors.Is(err, ErrCorruptDeletionFile), "%v", err)
		})
	}
	_, err := DecodeDeletionFile(tablepb.DeletionFile_BITMAP, []byte{1, 2, 3})
	assert.Check(t, errors.Is(err, ErrCorruptDeletionFile))
	// An uncompressed arrow-go file (what a foreign writer may produce) reads.
	dv, err := DecodeDeletionFile(tablepb.DeletionFile_ARROW_ARRAY, arrowFile(t, deletionSchema, u32(nil, 4, 2)))
	assert.NilError(t, err)
	assert.DeepEqual(t, dv.Rows(), []uint32{2, 4})
}

func TestMergeDeletions(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	f := fragment(3, 20_000, 0)
	f.DeletionFile = nil

	f1, dv, err := MergeDeletions(ctx, store, f, 2, []uint32{1, 2, 3})
	assert.NilError(t, err)
	assert.Check(t, f.DeletionFile == nil, "input fragment untouched")
	assert.Equal(t, f1.GetDeletionFile().GetNumDeletedRows(), uint64(3))
	assert.Equal(t, f1.GetDeletionFile().GetReadVersion(), uint64(2))
	assert.Equal(t, dv.FileType(), tablepb.DeletionFile_ARROW_ARRAY)

	// Every new file holds the complete set, and crosses to a bitmap past 5000.
	f2, dv, err := MergeDeletions(ctx, store, f1, 3, seq(1000, 6000))
	assert.NilError(t, err)
	assert.Equal(t, dv.Len(), uint64(6003))
	assert.Equal(t, f2.GetDeletionFile().GetFileType(), tablepb.DeletionFile_BITMAP)
	back, err := ReadDeletionFile(ctx, store, 3, f2.GetDeletionFile())
	assert.NilError(t, err)
	assert.Check(t, back.Contains(2) && back.Contains(6999) && !back.Contains(7000))
	// The old file is still there for the old version.
	_, err = ReadDeletionFile(ctx, store, 3, f1.GetDeletionFile())
	assert.NilError(t, err)

	_, _, err = MergeDeletions(ctx, store, f2, 4, []uint32{20_000})
	assert.ErrorContains(t, err, "past fragment")

	// A count that disagrees with the manifest is corruption.
	bad := *f2.GetDeletionFile()
	bad.NumDeletedRows = 5
	_, err = ReadDeletionFile(ctx, store, 3, &bad)
	assert.Check(t, errors.Is(err, ErrCorruptDeletionFile))
}

// TestSDKDeletionFiles reads every deletion file of the SDK fixtures.
func TestSDKDeletionFiles(t *testing.T) {
	dir := os.Getenv(fixtureEnv)
	if dir == "" {
		t.Skipf("%s is not set", fixtureEnv)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "_deletions", "*"))
	files2, _ := filepath.Glob(filepath.Join(dir, "*", "*", "_deletions", "*"))
	files = append(files, files2...)
	if len(files) == 0 {
		t.Skip("fixtures have no deletion files")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		assert.NilError(t, err)
		typ := tablepb.DeletionFile_ARROW_ARRAY
		if filepath.Ext(path) == ".bin" {
			typ = tablepb.DeletionFile_BITMAP
		}
		dv, err := DecodeDeletionFile(typ, data)
		assert.NilError(t, err, path)
		assert.Check(t, dv.Len() > 0)
		if typ == tablepb.DeletionFile_BITMAP {
			again, err := EncodeDeletionVector(dv)
			assert.NilError(t, err)
			assert.Check(t, bytes.Equal(again, data), "bitmap %s re-encodes identically", path)
		}
	}
}

func FuzzReadDeletionFile(f *testing.F) {
	for _, rows := range [][]uint32{{1}, {5, 3, 9}, seq(0, 6000)} {
		data, err := EncodeDeletionVector(NewDeletionVector(rows...))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, len(rows) > BitmapThreshold)
	}
	f.Add([]byte("ARROW1"), false)
	f.Add([]byte{0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0x10, 0, 0, 0, 0, 0, 1, 0, 2, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, bitmap bool) {
		typ := tablepb.DeletionFile_ARROW_ARRAY
		if bitmap {
			typ = tablepb.DeletionFile_BITMAP
		}
		dv, err := DecodeDeletionFile(typ, data)
		if err != nil {
			if !errors.Is(err, ErrCorruptDeletionFile) {
				t.Fatalf("error %v does not wrap ErrCorruptDeletionFile", err)
			}
			return
		}
		// Whatever decodes must re-encode and decode to the same set.
		again, err := EncodeDeletionVector(dv)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeDeletionFile(dv.FileType(), again)
		if err != nil {
			t.Fatal(err)
		}
		if back.Len() != dv.Len() {
			t.Fatalf("round trip changed %d rows to %d", dv.Len(), back.Len())
		}
	})
}
