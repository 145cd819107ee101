package lance

import (
	"encoding/binary"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// boundedRange serves data and fails the test if a read ever reaches outside
// it or the reads add up to more than the file: the decoder's only buffers
// are these reads, so this bounds what malformed input can make it allocate.
type boundedRange struct {
	t         *testing.T
	data      []byte
	requested int64
}

func (b *boundedRange) Size() int64 { return int64(len(b.data)) }

func (b *boundedRange) ReadRange(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(b.data)) {
		b.t.Fatalf("read [%d,+%d) outside a %d-byte file", off, n, len(b.data))
	}
	b.requested += n
	if b.requested > int64(len(b.data)) {
		b.t.Fatalf("read %d bytes in total from a %d-byte file", b.requested, len(b.data))
	}
	return append([]byte(nil), b.data[off:off+n]...), nil
}

func FuzzReadManifest(f *testing.F) {
	full := testManifestFile(3, fragment(0, 100, 0), fragment(1, 50, 5))
	f.Add(encodeOrPanic(full))
	f.Add(encodeOrPanic(&ManifestFile{Manifest: full.Manifest}))
	f.Add(encodeOrPanic(&ManifestFile{Manifest: &tablepb.Manifest{}}))
	f.Add([]byte("LANC"))
	f.Add(binary.LittleEndian.AppendUint64(make([]byte, 4), 0))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, 0xffffffff), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 'L', 'A', 'N', 'C'))

	f.Fuzz(func(t *testing.T, data []byte) {
		// The listing's summary decoder sees the same bytes; where the full
		// decode succeeds it must agree with it.
		sum, sumErr := decodeManifestSummary(&boundedRange{t: t, data: data})
		if sumErr != nil && !errors.Is(sumErr, ErrCorruptManifest) {
			t.Fatalf("summary error does not wrap ErrCorruptManifest: %v", sumErr)
		}
		r := &boundedRange{t: t, data: data}
		got, err := decodeManifestFile(r, true)
		if err == nil {
			if sumErr != nil {
				t.Fatalf("manifest decodes but its summary does not: %v", sumErr)
			}
			if sum.Version != got.Manifest.GetVersion() || !sum.Timestamp.Equal(manifestTime(got)) {
				t.Fatalf("summary %+v, manifest version %d at %v", sum, got.Manifest.GetVersion(), manifestTime(got))
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorruptManifest) {
				t.Fatalf("error does not wrap ErrCorruptManifest: %v", err)
			}
			return
		}
		// Whatever decodes must re-encode and decode to the same messages
		// (unknown fields included).
		out, err := got.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeManifestFile(out)
		if err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		if !proto.Equal(again.Manifest, got.Manifest) || !proto.Equal(again.Indices, got.Indices) ||
			!proto.Equal(again.Transaction, got.Transaction) {
			t.Fatalf("re-encoded file decodes differently")
		}
	})
}

func encodeOrPanic(f *ManifestFile) []byte {
	data, err := f.Encode()
	if err != nil {
		panic(err)
	}
	return data
}
