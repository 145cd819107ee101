package index

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

// The token FSTs SDK 0.31.0 and 0.39.0 wrote (part_0_tokens.lance,
// _token_fst_bytes) for the documents "the quick brown fox jumps over the
// lazy dog", "fox fox fox", "lazy dogs sleep", "quick quick brown": token
// ids in order of first appearance; 0.31.0's Lucene stop words keep "over".
const (
	sdkFST031 = "0300000000000000000000000000000000108bccc4c7001097c40010aac4001089d0d3001088f6c5001087c2e20010a7cac8d3131082c2cf070004050302060101060c11161b1f2373716f6c6a66646211080800000000000000510000000000000012e35b82"
	sdkFST039 = "0300000000000000000000000000000000108bccc4c7001097c40010aac4001089d0d3001088f6c50010a7cac8d30e1082c2cf0600040302050101060c11161a1e73716c6a66646211070700000000000000490000000000000009d19ddd"
)

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	assert.NilError(t, err)
	return b
}

func TestDecodeFSTMapSDK(t *testing.T) {
	for _, tc := range []struct {
		name string
		fst  string
		want map[string]uint32
	}{
		{"0.31.0", sdkFST031, map[string]uint32{"quick": 0, "brown": 1, "fox": 2, "jump": 3, "over": 4, "lazi": 5, "dog": 6, "sleep": 7}},
		{"0.39.0", sdkFST039, map[string]uint32{"quick": 0, "brown": 1, "fox": 2, "jump": 3, "lazi": 4, "dog": 5, "sleep": 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeFSTMap(mustHex(t, tc.fst), len(tc.want))
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
			// Fewer posting lists than keys: refused, not indexed out of range.
			_, err = decodeFSTMap(mustHex(t, tc.fst), len(tc.want)-1)
			assert.Assert(t, errors.Is(err, ErrCorrupt), "%v", err)
		})
	}
}

// TestDecodePosting covers both tail codecs and a block size of two
// chunks (posting_block_size 256), from lancecat's own packer.
func TestDecodePosting(t *testing.T) {
	docs := make([]uint32, 300)
	freqs := make([]uint32, 300)
	for i := range docs {
		docs[i] = uint32(3*i + i%3) // ascending
		freqs[i] = uint32(1 + i%9)
	}
	for _, bs := range []int{128, 256} {
		for _, varint := range []bool{false, true} {
			blocks := encodePostingForTest(docs, freqs, bs, varint)
			d, f, err := decodePosting(blocks, len(docs), bs, varint)
			assert.NilError(t, err)
			assert.DeepEqual(t, d, docs)
			assert.DeepEqual(t, f, freqs)
		}
	}
}

// encodePostingForTest writes Lance's posting layout (encoding.rs).
func encodePostingForTest(docs, freqs []uint32, bs int, varint bool) [][]byte {
	var out [][]byte
	for start := 0; start < len(docs); start += bs {
		blk := binary.LittleEndian.AppendUint32(nil, 0x3f800000)
		end := min(start+bs, len(docs))
		if end-start == bs {
			for c := start; c < end; c += ftsBlock {
				var d, f [ftsBlock]uint32
				copy(d[:], docs[c:])
				copy(f[:], freqs[c:])
				blk = packSorted4x(blk, &d)
				blk = packPlain4x(blk, &f)
			}
		} else if varint {
			prev := uint32(0)
			for i, d := range docs[start:end] {
				if i == 0 {
					blk = binary.AppendUvarint(blk, uint64(d))
				} else {
					blk = binary.AppendUvarint(blk, uint64(d-prev))
				}
				prev = d
			}
			for _, f := range freqs[start:end] {
				blk = binary.AppendUvarint(blk, uint64(f))
			}
		} else {
			for _, d := range docs[start:end] {
				blk = binary.LittleEndian.AppendUint32(blk, d)
			}
			for _, f := range freqs[start:end] {
				blk = binary.LittleEndian.AppendUint32(blk, f)
			}
		}
		out = append(out, blk)
	}
	return out
}

func FuzzDecodeFSTMap(f *testing.F) {
	f.Add(mustHex(f, sdkFST031), uint16(8))
	f.Add(mustHex(f, sdkFST039), uint16(7))
	f.Fuzz(func(t *testing.T, b []byte, maxKeys uint16) {
		m, err := decodeFSTMap(b, int(maxKeys%512))
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported), "%v", err)
			return
		}
		for _, v := range m {
			assert.Assert(t, int(v) < int(maxKeys%512))
		}
	})
}

func FuzzDecodePosting(f *testing.F) {
	docs := []uint32{1, 5, 9, 200, 201, 700}
	freqs := []uint32{1, 2, 3, 1, 1, 4}
	for _, v := range []bool{false, true} {
		blocks := encodePostingForTest(docs, freqs, 128, v)
		f.Add(blocks[0], uint8(len(docs)), v)
	}
	long := make([]uint32, 130)
	for i := range long {
		long[i] = uint32(i * 2)
	}
	bl := encodePostingForTest(long, long, 128, true)
	f.Add(bl[0], uint8(128), false)
	f.Fuzz(func(t *testing.T, blk []byte, n uint8, varint bool) {
		d, fr, err := decodePosting([][]byte{blk}, int(n), 128, varint)
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrCorrupt), "%v", err)
			return
		}
		assert.Equal(t, len(d), int(n))
		assert.Equal(t, len(fr), int(n))
	})
}

func FuzzDecodePositionBlock(f *testing.F) {
	f.Add([]byte{1, 0, 1, 2, 2}, []byte{2, 1, 2}, true)
	f.Add([]byte{3, 0, 1, 1}, []byte{3, 1}, false)
	f.Fuzz(func(t *testing.T, src, freqBytes []byte, packed bool) {
		freqs := make([]uint32, len(freqBytes))
		want := 0
		for i, b := range freqBytes {
			freqs[i] = uint32(b)
			want += int(b)
		}
		pos, err := decodePositionBlock(src, freqs, packed)
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrCorrupt), "%v", err)
			return
		}
		assert.Equal(t, len(pos), want)
	})
}
