package lance

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Manifest file framing, as lance-table's io/manifest.rs writes it:
//
//	[u32 LE len][IndexSection]   optional; Manifest.index_section = its offset
//	[u32 LE len][Transaction]    optional; Manifest.transaction_section = its offset
//	[u32 LE len][Manifest]
//	footer: i64 LE offset of the Manifest's length prefix, i16 0, i16 2, "LANC"
//
// The footer's 0.2 is the legacy file-format version; it is constant for
// manifests. Offsets point at a section's length prefix, not its bytes.
const (
	manifestFooterLen = 16
	sectionPrefixLen  = 4
	manifestMagic     = "LANC"
	manifestMajor     = 0
	manifestMinor     = 2
)

// ManifestFile is the content of one file under _versions/: the manifest of
// a version plus the sections Lance stores beside it.
type ManifestFile struct {
	Manifest *tablepb.Manifest
	// Indices is nil when the file has no index section.
	Indices *tablepb.IndexSection
	// Transaction is the inline copy of the transaction that produced this
	// version; nil when the file has none (older writers).
	Transaction *tablepb.Transaction
}

// marshalOpts sorts map entries so the same state always encodes to the same
// bytes; prost emits maps in hash order, so map order is the one place where
// our bytes can differ from Rust's.
var marshalOpts = proto.MarshalOptions{Deterministic: true}

// Encode serializes the file. It records the section offsets in
// f.Manifest (index_section, transaction_section), clearing them for
// sections that are absent, so the manifest always describes its own file.
func (f *ManifestFile) Encode() ([]byte, error) {
	if f.Manifest == nil {
		return nil, fmt.Errorf("lance: encode manifest file: no manifest")
	}
	var out []byte
	var err error
	dropStaleOffsets(f.Manifest)
	f.Manifest.IndexSection = nil
	if f.Indices != nil {
		f.Manifest.IndexSection = proto.Uint64(uint64(len(out)))
		if out, err = appendSection(out, f.Indices); err != nil {
			return nil, fmt.Errorf("lance: encode index section: %w", err)
		}
	}
	f.Manifest.TransactionSection = nil
	if f.Transaction != nil {
		f.Manifest.TransactionSection = proto.Uint64(uint64(len(out)))
		if out, err = appendSection(out, f.Transaction); err != nil {
			return nil, fmt.Errorf("lance: encode transaction section: %w", err)
		}
	}
	manifestPos := len(out)
	if out, err = appendSection(out, f.Manifest); err != nil {
		return nil, fmt.Errorf("lance: encode manifest: %w", err)
	}
	out = binary.LittleEndian.AppendUint64(out, uint64(manifestPos))
	out = binary.LittleEndian.AppendUint16(out, manifestMajor)
	out = binary.LittleEndian.AppendUint16(out, manifestMinor)
	return append(out, manifestMagic...), nil
}

// staleOffsets are Manifest fields newer Lances write that are offsets into the file they wrote
// (unknown to our protos, so a manifest derived from theirs would carry them into a file of
// another layout): Lance 14's transaction_section, 23 (its 21 is transaction_section_deprecated,
// which it still reads when 23 is absent, and which Encode sets). A stale 23 made pylance 14
// panic opening a dataset lancecat had compacted ("range end index … out of range").
var staleOffsets = []protowire.Number{23}

// dropStaleOffsets removes the staleOffsets fields from m's unknown fields.
func dropStaleOffsets(m *tablepb.Manifest) {
	u := m.ProtoReflect().GetUnknown()
	if len(u) == 0 {
		return
	}
	var kept []byte
	for b := u; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return // not ours to repair: keep the bytes as they are
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return
		}
		if !slices.Contains(staleOffsets, num) {
			kept = append(kept, b[:n+m]...)
		}
		b = b[n+m:]
	}
	m.ProtoReflect().SetUnknown(kept)
}

// appendSection appends a u32 length prefix and the message bytes.
func appendSection(out []byte, m proto.Message) ([]byte, error) {
	start := len(out)
	out = append(out, 0, 0, 0, 0) // length prefix, filled in below
	out, err := marshalOpts.MarshalAppend(out, m)
	if err != nil {
		return nil, err
	}
	size := len(out) - start - sectionPrefixLen
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("message of %d bytes does not fit a u32 length prefix", size)
	}
	binary.LittleEndian.PutUint32(out[start:], uint32(size))
	return out, nil
}
