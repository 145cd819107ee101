package lance

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

const (
	// manifestTailRead is how much of a manifest's end is fetched first, as
	// Rust does: small manifests and their sections arrive in one request.
	manifestTailRead = 64 << 10
	// maxManifestFileSize bounds what a reader will buffer. Real manifests
	// with many thousands of fragments are tens of MiB; anything near this
	// is not a manifest.
	maxManifestFileSize = 1 << 30
)

// rangeReader reads byte ranges of one file of known size. decodeManifest
// checks every range against Size before asking, so a hostile length field
// can never make us allocate more than the file holds.
type rangeReader interface {
	Size() int64
	ReadRange(off, n int64) ([]byte, error)
}

// bytesRange serves a file already in memory.
type bytesRange []byte

func (b bytesRange) Size() int64 { return int64(len(b)) }

func (b bytesRange) ReadRange(off, n int64) ([]byte, error) { return b[off : off+n], nil }

// DecodeManifestFile decodes a whole manifest file held in memory.
func DecodeManifestFile(data []byte) (*ManifestFile, error) {
	return decodeManifestFile(bytesRange(data), true)
}

// fileView caches the suffix [start, size) of a file and grows it downwards
// on demand: manifest files put their sections before the manifest, so a
// reader only ever needs to extend towards the front.
type fileView struct {
	r     rangeReader
	size  int64
	start int64
	buf   []byte
}

func (v *fileView) slice(off, end int64) ([]byte, error) {
	if off < v.start {
		more, err := v.r.ReadRange(off, v.start-off)
		if err != nil {
			return nil, err
		}
		if int64(len(more)) != v.start-off {
			return nil, fmt.Errorf("read %d bytes at %d, want %d", len(more), off, v.start-off)
		}
		v.buf = append(more[:len(more):len(more)], v.buf...)
		v.start = off
	}
	return v.buf[off-v.start : end-v.start], nil
}

// decodeManifestFile reads the footer, the manifest and, when sections is
// set, the index section and inline transaction. Without sections only the
// Manifest message is decoded (enough for listing versions).
func decodeManifestFile(r rangeReader, sections bool) (*ManifestFile, error) {
	size := r.Size()
	if size < manifestFooterLen+sectionPrefixLen {
		return nil, fmt.Errorf("%w: %d bytes is too small", ErrCorruptManifest, size)
	}
	if size > maxManifestFileSize {
		return nil, fmt.Errorf("%w: %d bytes exceeds the %d-byte limit", ErrCorruptManifest, size, maxManifestFileSize)
	}
	tailStart := max(0, size-manifestTailRead)
	tail, err := r.ReadRange(tailStart, size-tailStart)
	if err != nil {
		return nil, fmt.Errorf("lance: read manifest tail: %w", err)
	}
	if int64(len(tail)) != size-tailStart {
		return nil, fmt.Errorf("lance: read manifest tail: got %d bytes, want %d", len(tail), size-tailStart)
	}
	v := &fileView{r: r, size: size, start: tailStart, buf: tail}

	footer := tail[len(tail)-manifestFooterLen:]
	if string(footer[12:]) != manifestMagic {
		return nil, fmt.Errorf("%w: footer magic %q is not %q", ErrCorruptManifest, footer[12:], manifestMagic)
	}
	bodyEnd := size - manifestFooterLen
	pos := int64(binary.LittleEndian.Uint64(footer[:8]))
	if pos < 0 || pos > bodyEnd-sectionPrefixLen {
		return nil, fmt.Errorf("%w: manifest offset %d outside the %d-byte file", ErrCorruptManifest, pos, size)
	}
	// Like Rust, require the manifest to end exactly where the footer starts.
	prefix, err := v.slice(pos, pos+sectionPrefixLen)
	if err != nil {
		return nil, fmt.Errorf("lance: read manifest: %w", err)
	}
	msgLen := int64(binary.LittleEndian.Uint32(prefix))
	if want := bodyEnd - pos - sectionPrefixLen; msgLen != want {
		return nil, fmt.Errorf("%w: manifest length %d, but %d bytes precede the footer", ErrCorruptManifest, msgLen, want)
	}
	body, err := v.slice(pos+sectionPrefixLen, bodyEnd)
	if err != nil {
		return nil, fmt.Errorf("lance: read manifest: %w", err)
	}
	f := &ManifestFile{Manifest: &tablepb.Manifest{}}
	if err := proto.Unmarshal(body, f.Manifest); err != nil {
		return nil, fmt.Errorf("%w: manifest message: %w", ErrCorruptManifest, err)
	}
	if !sections {
		return f, nil
	}
	if off := f.Manifest.IndexSection; off != nil {
		f.Indices = &tablepb.IndexSection{}
		if err := decodeSection(v, *off, f.Indices); err != nil {
			return nil, fmt.Errorf("index section: %w", err)
		}
	}
	if off := f.Manifest.TransactionSection; off != nil {
		f.Transaction = &tablepb.Transaction{}
		if err := decodeSection(v, *off, f.Transaction); err != nil {
			return nil, fmt.Errorf("inline transaction: %w", err)
		}
	}
	return f, nil
}

// decodeSection decodes the length-prefixed message at off, which must lie
// wholly before the footer.
func decodeSection(v *fileView, off uint64, m proto.Message) error {
	bodyEnd := v.size - manifestFooterLen
	if off > uint64(bodyEnd-sectionPrefixLen) {
		return fmt.Errorf("%w: section offset %d outside the %d-byte file", ErrCorruptManifest, off, v.size)
	}
	pos := int64(off)
	prefix, err := v.slice(pos, pos+sectionPrefixLen)
	if err != nil {
		return fmt.Errorf("lance: read section: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(prefix))
	if n > bodyEnd-pos-sectionPrefixLen {
		return fmt.Errorf("%w: section at %d claims %d bytes, past the footer", ErrCorruptManifest, off, n)
	}
	data, err := v.slice(pos+sectionPrefixLen, pos+sectionPrefixLen+n)
	if err != nil {
		return fmt.Errorf("lance: read section: %w", err)
	}
	if err := proto.Unmarshal(data, m); err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptManifest, err)
	}
	return nil
}
