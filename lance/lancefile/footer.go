package lancefile

import (
	"encoding/binary"
	"fmt"
)

// FooterSize is the fixed size of the footer at the end of every Lance file.
const FooterSize = 40

var magic = [4]byte{'L', 'A', 'N', 'C'}

// Version is the format version written in the footer.
type Version struct{ Major, Minor uint16 }

// The footer says 0.3 for files of format 2.0; 0.1/0.2 are the legacy v1
// format, which has a different layout entirely.
var (
	V2_0 = Version{0, 3}
	V2_1 = Version{2, 1}
	V2_2 = Version{2, 2}
)

func (v Version) String() string {
	if v == V2_0 {
		return "2.0"
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Footer is the decoded 40-byte file footer.
type Footer struct {
	ColumnMetaStart   uint64 // first column metadata message
	ColumnMetaOffsets uint64 // start of the C × (position, size) table
	GlobalBufOffsets  uint64 // start of the G × (position, size) table
	NumGlobalBuffers  uint32
	NumColumns        uint32
	Version           Version
}

// ParseFooter decodes the last FooterSize bytes of a file of fileSize bytes
// and checks that every region it describes lies inside the file and before
// the footer, in the order Lance writes them.
func ParseFooter(b []byte, fileSize int64) (Footer, error) {
	var f Footer
	if len(b) != FooterSize {
		return f, fmt.Errorf("footer is %d bytes, want %d: %w", len(b), FooterSize, ErrCorrupt)
	}
	if [4]byte(b[36:40]) != magic {
		return f, fmt.Errorf("bad magic %q: %w", b[36:40], ErrCorrupt)
	}
	le := binary.LittleEndian
	f.ColumnMetaStart = le.Uint64(b[0:])
	f.ColumnMetaOffsets = le.Uint64(b[8:])
	f.GlobalBufOffsets = le.Uint64(b[16:])
	f.NumGlobalBuffers = le.Uint32(b[24:])
	f.NumColumns = le.Uint32(b[28:])
	f.Version = Version{le.Uint16(b[32:]), le.Uint16(b[34:])}
	if f.Version != V2_0 && f.Version != V2_1 && f.Version != V2_2 {
		return f, fmt.Errorf("file format version %s: %w", f.Version, ErrUnsupported)
	}
	if fileSize < FooterSize {
		return f, fmt.Errorf("file of %d bytes is smaller than its footer: %w", fileSize, ErrCorrupt)
	}
	end := uint64(fileSize) - FooterSize
	// Tables of 16-byte entries; sizes computed in uint64 from 32-bit counts
	// cannot overflow.
	cmoEnd := f.ColumnMetaOffsets + 16*uint64(f.NumColumns)
	gboEnd := f.GlobalBufOffsets + 16*uint64(f.NumGlobalBuffers)
	switch {
	case f.ColumnMetaStart > f.ColumnMetaOffsets,
		f.ColumnMetaOffsets > end || cmoEnd > end || cmoEnd < f.ColumnMetaOffsets,
		f.GlobalBufOffsets > end || gboEnd > end || gboEnd < f.GlobalBufOffsets:
		return f, fmt.Errorf("footer regions (meta %d, cmo %d+%d, gbo %d+%d) outside file of %d bytes: %w",
			f.ColumnMetaStart, f.ColumnMetaOffsets, f.NumColumns, f.GlobalBufOffsets, f.NumGlobalBuffers, fileSize, ErrCorrupt)
	}
	return f, nil
}

// bufferRange is a (position, size) pair from an offsets table or a page.
type bufferRange struct{ Pos, Size uint64 }

// parseOffsetTable decodes n (position, size) entries and checks each
// against the file size.
func parseOffsetTable(b []byte, n uint32, fileSize int64, what string) ([]bufferRange, error) {
	if uint64(len(b)) < 16*uint64(n) {
		return nil, fmt.Errorf("%s table truncated: %w", what, ErrCorrupt)
	}
	out := make([]bufferRange, n)
	for i := range out {
		r := bufferRange{binary.LittleEndian.Uint64(b[16*i:]), binary.LittleEndian.Uint64(b[16*i+8:])}
		if err := r.check(fileSize); err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i, err)
		}
		out[i] = r
	}
	return out, nil
}

func (r bufferRange) check(fileSize int64) error {
	if r.Pos > uint64(fileSize) || r.Size > uint64(fileSize)-r.Pos {
		return fmt.Errorf("buffer [%d, +%d) outside file of %d bytes: %w", r.Pos, r.Size, fileSize, ErrCorrupt)
	}
	return nil
}
