package lance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// BitmapThreshold: a deletion vector with more rows than this is stored as
// a Roaring bitmap (.bin), a smaller one as an Arrow array (.arrow); once a
// bitmap, it stays one. (Lance's BITMAP_THRESDHOLD.)
const BitmapThreshold = 5000

// maxDeletionFileSize bounds what a reader buffers: a bitmap of every u32
// is ~512 MiB, far beyond any fragment Lance writes.
const maxDeletionFileSize = 512 << 20

// ErrCorruptDeletionFile: a deletion file does not decode as Lance's.
var ErrCorruptDeletionFile = errors.New("lance: corrupt deletion file")

// DeletionVector is the set of deleted row offsets of one fragment, and the
// form it is stored in.
type DeletionVector struct {
	rows   *roaring.Bitmap
	bitmap bool
}

// NewDeletionVector holds rows in the form Lance would pick for them.
func NewDeletionVector(rows ...uint32) *DeletionVector {
	dv := &DeletionVector{rows: roaring.New()}
	dv.Add(rows...)
	return dv
}

// Add merges rows in, switching to the bitmap form past BitmapThreshold,
// as Lance extends a fragment's vector with a new delete.
func (dv *DeletionVector) Add(rows ...uint32) {
	dv.rows.AddMany(rows)
	if !dv.bitmap && dv.rows.GetCardinality() > BitmapThreshold {
		dv.bitmap = true
	}
}

// Len is the number of deleted rows.
func (dv *DeletionVector) Len() uint64 { return dv.rows.GetCardinality() }

// Contains reports whether row offset r is deleted.
func (dv *DeletionVector) Contains(r uint32) bool { return dv.rows.Contains(r) }

// Rows are the deleted offsets, ascending.
func (dv *DeletionVector) Rows() []uint32 { return dv.rows.ToArray() }

// FileType is the form the vector is written in.
func (dv *DeletionVector) FileType() tablepb.DeletionFile_DeletionFileType {
	if dv.bitmap {
		return tablepb.DeletionFile_BITMAP
	}
	return tablepb.DeletionFile_ARROW_ARRAY
}

// deletionSchema is the only schema Lance accepts in an .arrow file.
var deletionSchema = arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Uint32}}, nil)

// EncodeDeletionVector serializes dv in its form: Arrow IPC file with one
// batch of row_id uint32 (ZSTD-compressed buffers, as Lance writes them),
// or the portable Roaring serialization.
func EncodeDeletionVector(dv *DeletionVector) ([]byte, error) {
	var buf bytes.Buffer
	if dv.bitmap {
		if _, err := dv.rows.WriteTo(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	b := array.NewUint32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(dv.rows.ToArray(), nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(deletionSchema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(deletionSchema), ipc.WithZstd())
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeDeletionFile parses a deletion file of the given type. Malformed
// input is ErrCorruptDeletionFile, never a panic, and decoding allocates at
// most a bounded multiple of the input.
func DecodeDeletionFile(fileType tablepb.DeletionFile_DeletionFileType, data []byte) (dv *DeletionVector, err error) {
	defer func() {
		if r := recover(); r != nil {
			dv, err = nil, fmt.Errorf("%w: %v", ErrCorruptDeletionFile, r)
		}
	}()
	switch fileType {
	case tablepb.DeletionFile_BITMAP:
		bm := roaring.New()
		if err := bm.UnmarshalBinary(data); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorruptDeletionFile, err)
		}
		if err := bm.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorruptDeletionFile, err)
		}
		return &DeletionVector{rows: bm, bitmap: true}, nil
	case tablepb.DeletionFile_ARROW_ARRAY:
		return decodeArrowDeletions(data)
	}
	return nil, fmt.Errorf("%w: unknown file type %d", ErrCorruptDeletionFile, fileType)
}

func decodeArrowDeletions(data []byte) (*DeletionVector, error) {
	rows, err := decodeArrowDeletionsRaw(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptDeletionFile, err)
	}
	bm := roaring.New()
	bm.AddMany(rows)
	return &DeletionVector{rows: bm, bitmap: false}, nil
}

// ReadDeletionFile reads the deletion vector del of fragment fragmentID
// from store (the directory del lives in: the dataset's own, or the base
// path its base_id names).
func ReadDeletionFile(ctx context.Context, store storage.Reader, fragmentID uint64, del *tablepb.DeletionFile) (*DeletionVector, error) {
	key := DeletionFileKey(fragmentID, del)
	data, err := readObject(ctx, store, key, maxDeletionFileSize)
	if err != nil {
		return nil, fmt.Errorf("lance: read %s: %w", key, err)
	}
	dv, err := DecodeDeletionFile(del.GetFileType(), data)
	if err != nil {
		return nil, fmt.Errorf("lance: %s: %w", key, err)
	}
	if n := del.GetNumDeletedRows(); n != 0 && n != dv.Len() {
		return nil, fmt.Errorf("lance: %s: %w: holds %d rows, manifest says %d", key, ErrCorruptDeletionFile, dv.Len(), n)
	}
	return dv, nil
}

// WriteDeletionFile writes dv as a new deletion file of fragment fragmentID
// computed on readVersion, under a fresh random id, and returns the
// manifest entry for it (nil for an empty vector: no file).
func WriteDeletionFile(ctx context.Context, store storage.Writer, fragmentID, readVersion uint64, dv *DeletionVector) (*tablepb.DeletionFile, error) {
	if dv == nil || dv.Len() == 0 {
		return nil, nil
	}
	data, err := EncodeDeletionVector(dv)
	if err != nil {
		return nil, fmt.Errorf("lance: encode deletion vector: %w", err)
	}
	del := &tablepb.DeletionFile{
		FileType:       dv.FileType(),
		ReadVersion:    readVersion,
		Id:             rand.Uint64(),
		NumDeletedRows: dv.Len(),
	}
	key := DeletionFileKey(fragmentID, del)
	if _, err := store.Put(ctx, key, bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, fmt.Errorf("lance: write %s: %w", key, err)
	}
	return del, nil
}

// MergeDeletions is how Lance adds deletes to a fragment: the fragment's
// current vector (if any) is read from store, rows are added, and the whole
// set is written as a new file; the returned fragment is a copy of frag
// pointing at it. Rows at or past physical_rows are refused.
func MergeDeletions(ctx context.Context, store storage.Bucket, frag *tablepb.DataFragment, readVersion uint64, rows []uint32) (*tablepb.DataFragment, *DeletionVector, error) {
	if phys := frag.GetPhysicalRows(); phys > 0 {
		if i := slices.IndexFunc(rows, func(r uint32) bool { return uint64(r) >= phys }); i >= 0 {
			return nil, nil, fmt.Errorf("lance: row %d is past fragment %d's %d rows", rows[i], frag.GetId(), phys)
		}
	}
	dv := NewDeletionVector()
	if old := frag.GetDeletionFile(); old != nil {
		var err error
		if dv, err = ReadDeletionFile(ctx, store, frag.GetId(), old); err != nil {
			return nil, nil, err
		}
	}
	dv.Add(rows...)
	del, err := WriteDeletionFile(ctx, store, frag.GetId(), readVersion, dv)
	if err != nil {
		return nil, nil, err
	}
	out := cloneFragment(frag)
	out.DeletionFile = del
	return out, dv, nil
}

func cloneFragment(f *tablepb.DataFragment) *tablepb.DataFragment {
	return proto.CloneOf(f)
}
