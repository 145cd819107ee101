package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// Lance's row-id tree map (lance-core RowAddrTreeMap::serialize_into), the
// value of every bitmap in a BITMAP or LABEL_LIST index:
//
//	u32 LE  number of fragments
//	per fragment, ascending:
//	  u32 LE  fragment id (the high 32 bits of the row addresses)
//	  u32 LE  n, the size of the bitmap that follows; 0 = the whole fragment
//	  n bytes a 32-bit roaring bitmap of the offsets, portable format
//
// The roaring bitmaps are written without run containers (cookie 12346),
// as the SDK writes them.

// EncodeTreeMap serializes rows the way Lance does.
func EncodeTreeMap(rows *roaring64.Bitmap) ([]byte, error) {
	var out bytes.Buffer
	type part struct {
		hi uint32
		bm *roaring.Bitmap
	}
	var parts []part
	it := rows.Iterator()
	var cur *part
	for it.HasNext() {
		v := it.Next()
		hi := uint32(v >> 32)
		if cur == nil || cur.hi != hi {
			parts = append(parts, part{hi: hi, bm: roaring.New()})
			cur = &parts[len(parts)-1]
		}
		cur.bm.Add(uint32(v))
	}
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(parts)))
	out.Write(hdr[:4])
	for _, p := range parts {
		b, err := p.bm.ToBytes()
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint32(hdr[:4], p.hi)
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(b)))
		out.Write(hdr[:])
		out.Write(b)
	}
	return out.Bytes(), nil
}

// DecodeTreeMap parses a serialized row-id tree map. A whole-fragment
// entry (size 0) cannot be expanded without the fragment's length and is
// ErrUnsupported; the index builders never write one.
func DecodeTreeMap(b []byte) (*roaring64.Bitmap, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: row map of %d bytes", ErrCorrupt, len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	// Each fragment's bitmap is validated, then the whole map is handed to
	// roaring64 in its own portable format (u64 count, then u32 key and
	// 32-bit bitmap per bucket): containers are taken as they are, never
	// expanded value by value (a hostile run container holds 2^16 values
	// in 6 bytes).
	var out bytes.Buffer
	var hdr [8]byte
	out.Write(hdr[:]) // the count, set below
	prev := int64(-1)
	count := uint64(0)
	for i := uint32(0); i < n; i++ {
		if len(b) < 8 {
			return nil, fmt.Errorf("%w: row map truncated at fragment %d of %d", ErrCorrupt, i, n)
		}
		hi := binary.LittleEndian.Uint32(b)
		size := binary.LittleEndian.Uint32(b[4:])
		b = b[8:]
		if int64(hi) <= prev {
			return nil, fmt.Errorf("%w: row map fragments out of order", ErrCorrupt)
		}
		prev = int64(hi)
		if size == 0 {
			return nil, fmt.Errorf("%w: whole-fragment entry in a row map", ErrUnsupported)
		}
		if uint64(size) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: row map bitmap of %d bytes, %d left", ErrCorrupt, size, len(b))
		}
		bm, err := decodeRoaring(b[:size])
		if err != nil {
			return nil, err
		}
		b = b[size:]
		if bm.IsEmpty() {
			continue
		}
		binary.LittleEndian.PutUint32(hdr[:4], hi)
		out.Write(hdr[:4])
		if _, err := bm.WriteTo(&out); err != nil {
			return nil, err
		}
		count++
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the row map", ErrCorrupt, len(b))
	}
	buf := out.Bytes()
	binary.LittleEndian.PutUint64(buf, count)
	rows := roaring64.New()
	if err := rows.UnmarshalBinary(buf); err != nil {
		return nil, fmt.Errorf("%w: row map: %v", ErrCorrupt, err)
	}
	return rows, nil
}

// decodeRoaring reads a portable 32-bit roaring bitmap, never panicking on
// hostile bytes (the library validates the serialized form).
func decodeRoaring(b []byte) (bm *roaring.Bitmap, err error) {
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("%w: roaring bitmap: %v", ErrCorrupt, r)
		}
	}()
	bm = roaring.New()
	n, err := bm.FromUnsafeBytes(slices.Clone(b))
	if err != nil {
		return nil, fmt.Errorf("%w: roaring bitmap: %v", ErrCorrupt, err)
	}
	if n != int64(len(b)) {
		return nil, fmt.Errorf("%w: roaring bitmap of %d bytes in %d", ErrCorrupt, n, len(b))
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("%w: roaring bitmap: %v", ErrCorrupt, err)
	}
	return bm, nil
}

// EncodeFragmentBitmap is IndexMetadata.fragment_bitmap: the covered
// fragment ids as a portable 32-bit roaring bitmap.
func EncodeFragmentBitmap(ids []uint32) ([]byte, error) {
	return roaring.BitmapOf(ids...).ToBytes()
}

// DecodeFragmentBitmap parses IndexMetadata.fragment_bitmap.
func DecodeFragmentBitmap(b []byte) ([]uint32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	bm, err := decodeRoaring(b)
	if err != nil {
		return nil, err
	}
	return bm.ToArray(), nil
}
