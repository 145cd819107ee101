package lancefile

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/klauspost/compress/zstd"
)

// Writer-side compression: FastLanes bit-packing of integer chunks (the
// inverse of unpackFastLanes) and per-value zstd.

// isPackableInt reports whether values of dt are integers Lance bit-packs.
func isPackableInt(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return true
	}
	return false
}

// chunkBitWidth is the number of bits the largest (unsigned) value of a
// chunk needs.
func chunkBitWidth(vals []byte, w int) int {
	var or uint64
	switch w {
	case 1:
		for _, v := range vals {
			or |= uint64(v)
		}
	case 2:
		for i := 0; i+2 <= len(vals); i += 2 {
			or |= uint64(binary.LittleEndian.Uint16(vals[i:]))
		}
	case 4:
		for i := 0; i+4 <= len(vals); i += 4 {
			or |= uint64(binary.LittleEndian.Uint32(vals[i:]))
		}
	default:
		for i := 0; i+8 <= len(vals); i += 8 {
			or |= binary.LittleEndian.Uint64(vals[i:])
		}
	}
	return bits.Len64(or)
}

// bitpackPays compares the bit-packed size of the page's values with the
// flat size; packing must save at least a tenth.
func (c *column) bitpackPays() bool {
	p := &c.page
	flatSize := len(p.fixed)
	chunk := fastLanesBlock * c.width
	packed := 0
	for at := 0; at < len(p.fixed); at += chunk {
		end := min(at+chunk, len(p.fixed))
		packed += c.width + 128*chunkBitWidth(p.fixed[at:end], c.width)
		if packed*10 >= flatSize*9 {
			return false
		}
	}
	return packed*10 < flatSize*9
}

// packChunk appends one InlineBitpacking chunk: a T-bit word holding the
// bit width W, then the (zero-padded) 1024 values in FastLanes layout.
func packChunk(dst, vals []byte, w int) []byte {
	width := chunkBitWidth(vals, w)
	switch w {
	case 1:
		dst = append(dst, byte(width))
	case 2:
		dst = binary.LittleEndian.AppendUint16(dst, uint16(width))
	case 4:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(width))
	default:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(width))
	}
	if width == 0 {
		return dst
	}
	return packBlock(dst, vals, w, width)
}

// packBlock appends up to 1024 values of w bytes (zero-padded) packed to
// width bits in FastLanes layout: 128·width bytes.
func packBlock(dst, vals []byte, w, width int) []byte {
	t := 8 * w
	n := len(vals) / w
	start := len(dst)
	dst = append(dst, make([]byte, 128*width)...)
	out := dst[start:]
	lanes := fastLanesBlock / t
	get := func(i int) uint64 {
		if i >= n {
			return 0
		}
		return getUint(vals, i, t)
	}
	// Accumulate each lane's words in registers: word k of lane l lives at
	// word position lanes*k + l.
	for lane := 0; lane < lanes; lane++ {
		var acc uint64
		bit := 0
		k := 0
		for row := 0; row < t; row++ {
			v := get(fastLanesOrder[row/8]*16 + (row%8)*128 + lane)
			acc |= v << bit
			if bit+width >= t {
				putUint(out, lanes*k+lane, t, acc)
				k++
				spill := t - bit
				if spill < 64 && bit+width > t {
					acc = v >> spill
				} else {
					acc = 0
				}
				bit = bit + width - t
			} else {
				bit += width
			}
		}
	}
	return dst
}

var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
})

// zstdCompress appends Lance's framing of one zstd-compressed value: the
// uncompressed length as a u64, then one zstd frame.
func zstdCompress(dst, v []byte) []byte {
	enc, err := zstdEncoder()
	if err != nil {
		panic(err) // only option errors, which are fixed at compile time
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(v)))
	return enc.EncodeAll(v, dst)
}
