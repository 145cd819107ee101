package index

// BitPacker4x of the bitpacking crate, which Lance's INVERTED index uses
// for its full posting blocks of 128 doc ids and frequencies: the 128
// values are 32 groups of 4 lanes (value i is lane i%4, step i/4); each
// lane's 32 values are packed least significant bit first into 32-bit
// words, and word j of the four lanes is stored as 16 little-endian bytes.
// The sorted variant packs the differences to the previous value (the
// first to an initial value).

import (
	"encoding/binary"
	"fmt"
)

const ftsBlock = 128

// bitsFor is the number of bits the largest of vals needs.
func bitsFor(vals []uint32) uint8 {
	var or uint32
	for _, v := range vals {
		or |= v
	}
	n := uint8(0)
	for or != 0 {
		n++
		or >>= 1
	}
	return n
}

// pack4x appends the 128 vals packed with nbits bits.
func pack4x(dst []byte, vals *[ftsBlock]uint32, nbits uint8) []byte {
	if nbits == 0 {
		return dst
	}
	start := len(dst)
	dst = append(dst, make([]byte, 16*int(nbits))...)
	out := dst[start:]
	for lane := 0; lane < 4; lane++ {
		var word uint64
		fill := uint(0)
		w := 0
		for step := 0; step < 32; step++ {
			word |= uint64(vals[step*4+lane]) << fill
			fill += uint(nbits)
			if fill >= 32 {
				binary.LittleEndian.PutUint32(out[(w*4+lane)*4:], uint32(word))
				w++
				word >>= 32
				fill -= 32
			}
		}
	}
	return dst
}

// unpack4x reads 128 values packed with nbits bits from src (16*nbits bytes).
func unpack4x(src []byte, nbits uint8, vals *[ftsBlock]uint32) {
	if nbits == 0 {
		*vals = [ftsBlock]uint32{}
		return
	}
	mask := uint64(1)<<nbits - 1
	for lane := 0; lane < 4; lane++ {
		var word uint64
		have := uint(0)
		w := 0
		for step := 0; step < 32; step++ {
			if have < uint(nbits) {
				word |= uint64(binary.LittleEndian.Uint32(src[(w*4+lane)*4:])) << have
				w++
				have += 32
			}
			vals[step*4+lane] = uint32(word & mask)
			word >>= nbits
			have -= uint(nbits)
		}
	}
}

// packSorted4x appends the ascending vals as deltas from initial: the
// initial value (4 bytes), the bit width (1 byte) and the packed deltas.
func packSorted4x(dst []byte, vals *[ftsBlock]uint32) []byte {
	var d [ftsBlock]uint32
	nbits := deltaBits(&d, vals)
	dst = binary.LittleEndian.AppendUint32(dst, vals[0])
	dst = append(dst, nbits)
	return pack4x(dst, &d, nbits)
}

// unpackSorted4x is packSorted4x's inverse; it returns the bytes read.
func unpackSorted4x(src []byte, vals *[ftsBlock]uint32) (int, error) {
	if len(src) < 5 {
		return 0, fmt.Errorf("%w: short posting block", ErrCorrupt)
	}
	initial := binary.LittleEndian.Uint32(src)
	nbits := src[4]
	n := 5 + 16*int(nbits)
	if nbits > 32 || len(src) < n {
		return 0, fmt.Errorf("%w: short posting block", ErrCorrupt)
	}
	unpack4x(src[5:], nbits, vals)
	acc := initial
	for i := range vals {
		acc += vals[i]
		vals[i] = acc
	}
	return n, nil
}

// unpackPlain4x reads the bit width and packed values; it returns the bytes read.
func unpackPlain4x(src []byte, vals *[ftsBlock]uint32) (int, error) {
	if len(src) < 1 {
		return 0, fmt.Errorf("%w: short posting block", ErrCorrupt)
	}
	nbits := src[0]
	n := 1 + 16*int(nbits)
	if nbits > 32 || len(src) < n {
		return 0, fmt.Errorf("%w: short posting block", ErrCorrupt)
	}
	unpack4x(src[1:], nbits, vals)
	return n, nil
}

func packPlain4x(dst []byte, vals *[ftsBlock]uint32) []byte {
	nbits := bitsFor(vals[:])
	dst = append(dst, nbits)
	return pack4x(dst, vals, nbits)
}

// deltaBits is packSorted4x's bit width for vals: the width of the
// largest difference to the previous value (d is scratch).
func deltaBits(d *[ftsBlock]uint32, vals *[ftsBlock]uint32) uint8 {
	prev := vals[0]
	for i, v := range vals {
		d[i] = v - prev
		prev = v
	}
	return bitsFor(d[:])
}
