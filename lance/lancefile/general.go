package lancefile

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// maxDecompressed bounds one decompressed buffer; Lance's largest (a
// full-zip value or a page buffer) stays far below.
const maxDecompressed = 1 << 30

var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))
})

// decompressBuffer undoes a BufferCompression. Lance prefixes zstd frames
// with the uncompressed length as a u64 (older writers wrote a bare frame).
func decompressBuffer(bc *enc21pb.BufferCompression, buf []byte) ([]byte, error) {
	switch bc.GetScheme() {
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		return zstdDecompress(buf)
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		return lz4Decompress(buf)
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_UNSPECIFIED:
		return buf, nil
	}
	return nil, fmt.Errorf("buffer compression %s: %w", bc.GetScheme(), ErrUnsupported)
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func zstdDecompress(buf []byte) ([]byte, error) {
	d, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	var want uint64
	hasLen := len(buf) >= 12 && string(buf[8:12]) == string(zstdMagic)
	if hasLen {
		want = binary.LittleEndian.Uint64(buf)
		if want > maxDecompressed {
			return nil, fmt.Errorf("zstd value of %d bytes: %w", want, ErrCorrupt)
		}
		buf = buf[8:]
	}
	out, err := d.DecodeAll(buf, make([]byte, 0, want))
	if err != nil {
		return nil, fmt.Errorf("zstd: %v: %w", err, ErrCorrupt)
	}
	if hasLen && uint64(len(out)) != want {
		return nil, fmt.Errorf("zstd value is %d bytes, header says %d: %w", len(out), want, ErrCorrupt)
	}
	return out, nil
}

// lz4Decompress decodes an LZ4 block prefixed with its uncompressed length
// as a u32 (file format 2.2 compresses dictionaries this way).
func lz4Decompress(buf []byte) ([]byte, error) {
	if len(buf) < 4 {
		return nil, fmt.Errorf("lz4 buffer of %d bytes: %w", len(buf), ErrCorrupt)
	}
	want := binary.LittleEndian.Uint32(buf)
	if want > maxDecompressed {
		return nil, fmt.Errorf("lz4 value of %d bytes: %w", want, ErrCorrupt)
	}
	if want == 0 {
		return []byte{}, nil
	}
	out := make([]byte, want)
	n, err := lz4.UncompressBlock(buf[4:], out)
	if err != nil {
		return nil, fmt.Errorf("lz4: %v: %w", err, ErrCorrupt)
	}
	if n != int(want) {
		return nil, fmt.Errorf("lz4 value is %d bytes, header says %d: %w", n, want, ErrCorrupt)
	}
	return out, nil
}
