package lancefile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

func footerBytes(metaStart, cmo, gbo uint64, nGlobal, nCols uint32, major, minor uint16, magic string) []byte {
	b := make([]byte, FooterSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], metaStart)
	le.PutUint64(b[8:], cmo)
	le.PutUint64(b[16:], gbo)
	le.PutUint32(b[24:], nGlobal)
	le.PutUint32(b[28:], nCols)
	le.PutUint16(b[32:], major)
	le.PutUint16(b[34:], minor)
	copy(b[36:], magic)
	return b
}

func TestParseFooter(t *testing.T) {
	tests := []struct {
		name    string
		footer  []byte
		size    int64
		wantErr error
	}{
		{"valid 2.1", footerBytes(0, 0, 16, 1, 1, 2, 1, "LANC"), 72, nil},
		{"valid 2.0", footerBytes(0, 0, 16, 1, 1, 0, 3, "LANC"), 72, nil},
		{"bad magic", footerBytes(0, 0, 16, 1, 1, 2, 1, "LANX"), 72, ErrCorrupt},
		{"legacy v1", footerBytes(0, 0, 16, 1, 1, 0, 2, "LANC"), 72, ErrUnsupported},
		{"valid 2.2", footerBytes(0, 0, 16, 1, 1, 2, 2, "LANC"), 72, nil},
		{"2.3 not yet", footerBytes(0, 0, 16, 1, 1, 2, 3, "LANC"), 72, ErrUnsupported},
		{"cmo past footer", footerBytes(0, 30, 16, 1, 1, 2, 1, "LANC"), 72, ErrCorrupt},
		{"huge column count", footerBytes(0, 0, 16, 1, 1<<31, 2, 1, "LANC"), 72, ErrCorrupt},
		{"meta after cmo", footerBytes(20, 0, 16, 1, 1, 2, 1, "LANC"), 72, ErrCorrupt},
		{"gbo overflow", footerBytes(0, 0, ^uint64(0)-4, 1, 1, 2, 1, "LANC"), 72, ErrCorrupt},
		{"short", []byte("LANC"), 72, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFooter(tc.footer, tc.size)
			if tc.wantErr == nil {
				assert.NilError(t, err)
				return
			}
			assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
		})
	}
}

func TestOpenTruncated(t *testing.T) {
	for _, size := range []int{0, 10, 39, 40} {
		data := bytes.Repeat([]byte{0}, size)
		_, err := Open(context.Background(), NewReaderAtSource(bytes.NewReader(data), int64(size)))
		assert.Assert(t, errors.Is(err, ErrCorrupt), "size %d: %v", size, err)
	}
}
