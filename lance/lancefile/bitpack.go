package lancefile

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// FastLanes bit-packing, as Lance's InlineBitpacking and OutOfLineBitpacking
// store it: blocks of 1024 values of a T-bit unsigned type, packed to W bits
// in a transposed layout so that SIMD lanes unpack independently. A block is
// 1024·W bits = 128·W bytes regardless of T.

const fastLanesBlock = 1024

// fastLanesOrder is the row permutation inside each group of 8 rows.
var fastLanesOrder = [8]int{0, 4, 2, 6, 1, 5, 3, 7}

// unpackFastLanes decodes one packed block of W-bit values of a T-bit type
// from src (which must hold 128·W bytes) into dst (1024 values of T/8 bytes,
// little-endian).
func unpackFastLanes(dst, src []byte, t, w int) error {
	if w < 0 || w > t {
		return fmt.Errorf("bit width %d for %d-bit values: %w", w, t, ErrCorrupt)
	}
	if len(src) < 128*w || len(dst) < fastLanesBlock*t/8 {
		return fmt.Errorf("bit-packed block needs %d bytes, have %d: %w", 128*w, len(src), ErrCorrupt)
	}
	dst = dst[:fastLanesBlock*t/8]
	if w == 0 {
		clear(dst)
		return nil
	}
	src = src[:128*w]
	if t > 8 && uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%uintptr(t/8) != 0 {
		// a view of an unaligned destination would be a copy: unpack
		// into an aligned one and copy that
		tmp := make([]byte, len(dst))
		_ = unpackFastLanes(tmp, src, t, w)
		copy(dst, tmp)
		return nil
	}
	// One loop per width, over typed words: the generic byte-at-a-time
	// form (a closure and a switch per value) was most of the decode of
	// an int64 column (count_rows with a filter, issue 15).
	switch t {
	case 8:
		unpackLanes(dst, src, w)
	case 16:
		unpackLanes(asWords[uint16](dst), asWords[uint16](src), w)
	case 32:
		unpackLanes(asWords[uint32](dst), asWords[uint32](src), w)
	default:
		unpackLanes(asWords[uint64](dst), asWords[uint64](src), w)
	}
	return nil
}

// laneRow[t][row] is where row r of a lane (before adding the lane) lands
// in the block: FastLanes interleaves rows in groups of 8.
var laneRow = func() (out [65][]int) {
	for _, t := range []int{8, 16, 32, 64} {
		out[t] = make([]int, t)
		for row := range out[t] {
			out[t][row] = fastLanesOrder[row/8]*16 + (row%8)*128
		}
	}
	return out
}()

// unpackLanes is unpackFastLanes over words of the value type (0 < w ≤ T).
func unpackLanes[T uint8 | uint16 | uint32 | uint64](dst, src []T, w int) {
	t := int(unsafe.Sizeof(T(0))) * 8
	lanes := fastLanesBlock / t
	mask := ^T(0)
	if w < t {
		mask = T(1)<<w - 1
	}
	rows := laneRow[t]
	k, shift := 0, 0
	for row := 0; row < t; row++ {
		d := dst[rows[row] : rows[row]+lanes]
		s0 := src[lanes*k : lanes*k+lanes]
		if shift+w > t {
			s1 := src[lanes*(k+1) : lanes*(k+1)+lanes]
			for lane := range d {
				d[lane] = (s0[lane]>>shift | s1[lane]<<(t-shift)) & mask
			}
		} else {
			for lane := range d {
				d[lane] = s0[lane] >> shift & mask
			}
		}
		if shift += w; shift >= t {
			shift -= t
			k++
		}
	}
}

// asWords views little-endian bytes as words of T, in place when b is
// aligned for T (buffers are, in practice), else in an aligned copy. The
// host is little-endian, as arrow-go assumes. Writing through the view of
// an unaligned b would be lost: only sources may be unaligned, and
// destinations are allocated here (make of bytes is 8-aligned).
func asWords[T uint16 | uint32 | uint64](b []byte) []T {
	size := int(unsafe.Sizeof(T(0)))
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) != 0 {
		cp := make([]T, len(b)/size)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cp))), len(cp)*size), b)
		return cp
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

func putUint(dst []byte, i, t int, v uint64) {
	switch t {
	case 8:
		dst[i] = byte(v)
	case 16:
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(v))
	case 32:
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(dst[8*i:], v)
	}
}

func getUint(src []byte, i, t int) uint64 {
	switch t {
	case 8:
		return uint64(src[i])
	case 16:
		return uint64(binary.LittleEndian.Uint16(src[2*i:]))
	case 32:
		return uint64(binary.LittleEndian.Uint32(src[4*i:]))
	default:
		return binary.LittleEndian.Uint64(src[8*i:])
	}
}

func validUintWidth(t uint64) bool { return t == 8 || t == 16 || t == 32 || t == 64 }

// decodeInlineBitpacked decodes a mini-block chunk of InlineBitpacking: a
// T-bit word holding W, then one FastLanes block. n ≤ 1024 values are real.
func decodeInlineBitpacked(buf []byte, t, n int) ([]byte, error) {
	if n > fastLanesBlock {
		return nil, fmt.Errorf("inline bit-packed chunk of %d values: %w", n, ErrCorrupt)
	}
	if len(buf) < t/8 {
		return nil, fmt.Errorf("inline bit-packed chunk truncated: %w", ErrCorrupt)
	}
	w := int(getUint(buf, 0, t))
	out := make([]byte, fastLanesBlock*t/8)
	if err := unpackFastLanes(out, buf[t/8:], t, w); err != nil {
		return nil, err
	}
	return out[:n*t/8], nil
}

// decodeOutOfLineBitpacked decodes n values packed to w bits: full blocks,
// then either one more padded block or the tail stored unpacked; the buffer
// length tells which.
func decodeOutOfLineBitpacked(buf []byte, t, w, n int) ([]byte, error) {
	if w < 0 || w > t {
		return nil, fmt.Errorf("bit width %d for %d-bit values: %w", w, t, ErrCorrupt)
	}
	full := n / fastLanesBlock
	tail := n % fastLanesBlock
	blockBytes := 128 * w
	if len(buf) < full*blockBytes {
		return nil, fmt.Errorf("out-of-line bit-packed buffer of %d bytes for %d values: %w", len(buf), n, ErrCorrupt)
	}
	out := make([]byte, (full+1)*fastLanesBlock*t/8)
	for b := 0; b < full; b++ {
		if err := unpackFastLanes(out[b*fastLanesBlock*t/8:], buf[b*blockBytes:], t, w); err != nil {
			return nil, err
		}
	}
	rest := buf[full*blockBytes:]
	switch {
	case tail == 0:
	case len(rest) == tail*t/8:
		copy(out[full*fastLanesBlock*t/8:], rest)
	case len(rest) >= blockBytes:
		if err := unpackFastLanes(out[full*fastLanesBlock*t/8:], rest, t, w); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("out-of-line bit-packed tail of %d bytes for %d values: %w", len(rest), tail, ErrCorrupt)
	}
	return out[:n*t/8], nil
}
