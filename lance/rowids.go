package lance

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Stable row ids (Lance's move-stable row ids): each fragment of a dataset
// with FlagStableRowIDs records the row id of each of its physical rows as
// a RowIdSequence (rowids.proto), inline or in an external file. Without
// the flag a row's id is its address, fragment id << 32 | offset.

// maxRowIDs bounds what a corrupt sequence may make us allocate.
const maxRowIDs = 1 << 32

// RowAddress is the address of row offset in fragment.
func RowAddress(fragment uint64, offset uint32) uint64 { return fragment<<32 | uint64(offset) }

// SplitRowAddress is the inverse of RowAddress.
func SplitRowAddress(addr uint64) (fragment uint64, offset uint32) {
	return addr >> 32, uint32(addr)
}

func encodeRowIDRange(start, end uint64) ([]byte, error) {
	return proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{{
		Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: start, End: end}},
	}}})
}

func encodeVersionRun(rows, version uint64) ([]byte, error) {
	return proto.Marshal(&tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{
		Span:    &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: 0, End: rows}}},
		Version: version,
	}}})
}

// FragmentRowIDs returns the row id of every physical row of frag, in
// offset order: from its row id sequence on a dataset with stable row ids,
// else the row addresses.
func (d *Dataset) FragmentRowIDs(ctx context.Context, frag *tablepb.DataFragment) ([]uint64, error) {
	var data []byte
	switch s := frag.GetRowIdSequence().(type) {
	case nil:
		out := make([]uint64, frag.GetPhysicalRows())
		for i := range out {
			out[i] = RowAddress(frag.GetId(), uint32(i))
		}
		return out, nil
	case *tablepb.DataFragment_InlineRowIds:
		data = s.InlineRowIds
	case *tablepb.DataFragment_ExternalRowIds:
		ext := s.ExternalRowIds
		if ext.GetSize() > 1<<30 {
			return nil, fmt.Errorf("%w: fragment %d row ids of %d bytes", ErrCorruptManifest, frag.GetId(), ext.GetSize())
		}
		rc, err := d.store.GetRange(ctx, ext.GetPath(), int64(ext.GetOffset()), int64(ext.GetSize()))
		if err != nil {
			return nil, fmt.Errorf("lance: fragment %d row ids: %w", frag.GetId(), err)
		}
		data, err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("lance: fragment %d row ids: %w", frag.GetId(), err)
		}
	default:
		return nil, fmt.Errorf("%w: fragment %d: unknown row id sequence", ErrUnsupportedFeature, frag.GetId())
	}
	ids, err := DecodeRowIDSequence(data)
	if err != nil {
		return nil, fmt.Errorf("lance: fragment %d: %w", frag.GetId(), err)
	}
	if phys := frag.GetPhysicalRows(); phys != 0 && uint64(len(ids)) != phys {
		return nil, fmt.Errorf("%w: fragment %d has %d row ids for %d rows", ErrCorruptManifest, frag.GetId(), len(ids), phys)
	}
	return ids, nil
}

// DecodeRowIDSequence expands a serialized RowIdSequence.
func DecodeRowIDSequence(data []byte) ([]uint64, error) {
	var seq tablepb.RowIdSequence
	if err := proto.Unmarshal(data, &seq); err != nil {
		return nil, fmt.Errorf("%w: row id sequence: %w", ErrCorruptManifest, err)
	}
	var out []uint64
	for _, seg := range seq.GetSegments() {
		var err error
		if out, err = appendSegment(out, seg); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func appendSegment(out []uint64, seg *tablepb.U64Segment) ([]uint64, error) {
	span := func(start, end uint64) error {
		if end < start || end-start > maxRowIDs || uint64(len(out))+(end-start) > maxRowIDs {
			return fmt.Errorf("%w: row id range [%d, %d)", ErrCorruptManifest, start, end)
		}
		return nil
	}
	switch s := seg.GetSegment().(type) {
	case *tablepb.U64Segment_Range_:
		r := s.Range
		if err := span(r.GetStart(), r.GetEnd()); err != nil {
			return nil, err
		}
		for id := r.GetStart(); id < r.GetEnd(); id++ {
			out = append(out, id)
		}
	case *tablepb.U64Segment_RangeWithHoles_:
		r := s.RangeWithHoles
		if err := span(r.GetStart(), r.GetEnd()); err != nil {
			return nil, err
		}
		holes, err := decodeU64Array(r.GetHoles())
		if err != nil {
			return nil, err
		}
		skip := make(map[uint64]bool, len(holes))
		for _, h := range holes {
			skip[h] = true
		}
		for id := r.GetStart(); id < r.GetEnd(); id++ {
			if !skip[id] {
				out = append(out, id)
			}
		}
	case *tablepb.U64Segment_RangeWithBitmap_:
		r := s.RangeWithBitmap
		if err := span(r.GetStart(), r.GetEnd()); err != nil {
			return nil, err
		}
		bm := r.GetBitmap()
		if uint64(len(bm))*8 < r.GetEnd()-r.GetStart() {
			return nil, fmt.Errorf("%w: row id bitmap of %d bytes for %d rows", ErrCorruptManifest, len(bm), r.GetEnd()-r.GetStart())
		}
		for i := uint64(0); i < r.GetEnd()-r.GetStart(); i++ {
			if bm[i/8]&(1<<(i%8)) != 0 {
				out = append(out, r.GetStart()+i)
			}
		}
	case *tablepb.U64Segment_SortedArray:
		vals, err := decodeU64Array(s.SortedArray)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
	case *tablepb.U64Segment_Array:
		vals, err := decodeU64Array(s.Array)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
	default:
		return nil, fmt.Errorf("%w: row id segment of unknown type", ErrCorruptManifest)
	}
	return out, nil
}

func decodeU64Array(a *tablepb.EncodedU64Array) ([]uint64, error) {
	switch s := a.GetArray().(type) {
	case *tablepb.EncodedU64Array_U16Array_:
		b := s.U16Array.GetOffsets()
		if len(b)%2 != 0 {
			return nil, fmt.Errorf("%w: u16 row id array of %d bytes", ErrCorruptManifest, len(b))
		}
		out := make([]uint64, len(b)/2)
		for i := range out {
			out[i] = s.U16Array.GetBase() + uint64(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return out, nil
	case *tablepb.EncodedU64Array_U32Array_:
		b := s.U32Array.GetOffsets()
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("%w: u32 row id array of %d bytes", ErrCorruptManifest, len(b))
		}
		out := make([]uint64, len(b)/4)
		for i := range out {
			out[i] = s.U32Array.GetBase() + uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out, nil
	case *tablepb.EncodedU64Array_U64Array_:
		b := s.U64Array.GetValues()
		if len(b)%8 != 0 {
			return nil, fmt.Errorf("%w: u64 row id array of %d bytes", ErrCorruptManifest, len(b))
		}
		out := make([]uint64, len(b)/8)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: row id array of unknown type", ErrCorruptManifest)
}
