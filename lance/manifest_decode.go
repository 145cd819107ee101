package lance

import (
	"encoding/binary"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

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
// Manifest message is decoded.
func decodeManifestFile(r rangeReader, sections bool) (*ManifestFile, error) {
	v, body, err := manifestBody(r)
	if err != nil {
		return nil, err
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

// manifestSummary is what a version listing needs from a manifest.
type manifestSummary struct {
	Version   uint64
	Timestamp time.Time
}

// decodeManifestSummary reads a manifest's version and timestamp without
// decoding the rest: the Manifest message is walked field by field and
// everything else (the fragment list, which grows with the table and is
// most of a manifest) is skipped, not unmarshaled. A long history is listed
// ~10× faster this way than with proto.Unmarshal of every manifest.
func decodeManifestSummary(r rangeReader) (manifestSummary, error) {
	_, body, err := manifestBody(r)
	if err != nil {
		return manifestSummary{}, err
	}
	var out manifestSummary
	var ts *timestamppb.Timestamp
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			return manifestSummary{}, fmt.Errorf("%w: manifest message: %w", ErrCorruptManifest, protowire.ParseError(n))
		}
		body = body[n:]
		switch {
		case num == manifestVersionField && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(body)
			if n < 0 {
				return manifestSummary{}, fmt.Errorf("%w: manifest version: %w", ErrCorruptManifest, protowire.ParseError(n))
			}
			out.Version, body = v, body[n:]
		case num == manifestTimestampField && typ == protowire.BytesType:
			msg, n := protowire.ConsumeBytes(body)
			if n < 0 {
				return manifestSummary{}, fmt.Errorf("%w: manifest timestamp: %w", ErrCorruptManifest, protowire.ParseError(n))
			}
			// A repeated message field merges, as proto.Unmarshal would.
			if ts == nil {
				ts = &timestamppb.Timestamp{}
			}
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(msg, ts); err != nil {
				return manifestSummary{}, fmt.Errorf("%w: manifest timestamp: %w", ErrCorruptManifest, err)
			}
			body = body[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, body)
			if n < 0 {
				return manifestSummary{}, fmt.Errorf("%w: manifest message: %w", ErrCorruptManifest, protowire.ParseError(n))
			}
			body = body[n:]
		}
	}
	if ts != nil {
		out.Timestamp = ts.AsTime()
	}
	return out, nil
}

// Field numbers of lance.table.Manifest that decodeManifestSummary reads.
const (
	manifestVersionField   protowire.Number = 3
	manifestTimestampField protowire.Number = 7
)

// manifestBody checks the footer and returns the Manifest message's bytes,
// with the view the sections are read through.
func manifestBody(r rangeReader) (*fileView, []byte, error) {
	size := r.Size()
	if size < manifestFooterLen+sectionPrefixLen {
		return nil, nil, fmt.Errorf("%w: %d bytes is too small", ErrCorruptManifest, size)
	}
	if size > maxManifestFileSize {
		return nil, nil, fmt.Errorf("%w: %d bytes exceeds the %d-byte limit", ErrCorruptManifest, size, maxManifestFileSize)
	}
	tailStart := max(0, size-manifestTailRead)
	tail, err := r.ReadRange(tailStart, size-tailStart)
	if err != nil {
		return nil, nil, fmt.Errorf("lance: read manifest tail: %w", err)
	}
	if int64(len(tail)) != size-tailStart {
		return nil, nil, fmt.Errorf("lance: read manifest tail: got %d bytes, want %d", len(tail), size-tailStart)
	}
	v := &fileView{r: r, size: size, start: tailStart, buf: tail}

	footer := tail[len(tail)-manifestFooterLen:]
	if string(footer[12:]) != manifestMagic {
		return nil, nil, fmt.Errorf("%w: footer magic %q is not %q", ErrCorruptManifest, footer[12:], manifestMagic)
	}
	bodyEnd := size - manifestFooterLen
	pos := int64(binary.LittleEndian.Uint64(footer[:8]))
	if pos < 0 || pos > bodyEnd-sectionPrefixLen {
		return nil, nil, fmt.Errorf("%w: manifest offset %d outside the %d-byte file", ErrCorruptManifest, pos, size)
	}
	// Like Rust, require the manifest to end exactly where the footer starts.
	prefix, err := v.slice(pos, pos+sectionPrefixLen)
	if err != nil {
		return nil, nil, fmt.Errorf("lance: read manifest: %w", err)
	}
	msgLen := int64(binary.LittleEndian.Uint32(prefix))
	if want := bodyEnd - pos - sectionPrefixLen; msgLen != want {
		return nil, nil, fmt.Errorf("%w: manifest length %d, but %d bytes precede the footer", ErrCorruptManifest, msgLen, want)
	}
	body, err := v.slice(pos+sectionPrefixLen, bodyEnd)
	if err != nil {
		return nil, nil, fmt.Errorf("lance: read manifest: %w", err)
	}
	return v, body, nil
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
