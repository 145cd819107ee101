package console

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/lancecat/lancecat/internal/arrowipc"
)

// preview is a query answer as a grid of strings.
type preview struct {
	Columns []string
	Rows    [][]string
}

// maxCell bounds a shown value (a long string or a vector is cut, marked with an ellipsis).
const maxCell = 120

// fileMagic opens and closes an Arrow IPC file.
var fileMagic = []byte("ARROW1")

// decodePreview reads the query door's answer (an Arrow IPC file) into at most limit rows of
// display strings. An Arrow file is the stream format between a magic header and a footer, so
// the stream part goes through internal/arrowipc, the repo's hardened reader (metadata verified
// before anything is allocated, records validated), rather than arrow-go's file reader, which
// trusts the footer and panics on a forged one (found by FuzzDecodePreview). A malformed answer
// is an error, never a crash of the page.
func decodePreview(b []byte, limit int) (*preview, error) {
	const head, tail = 8, 10 // magic + padding; footer length + magic
	if len(b) < head+tail || !bytes.Equal(b[:6], fileMagic) || !bytes.Equal(b[len(b)-6:], fileMagic) {
		return nil, errors.New("not an Arrow IPC file")
	}
	footer := int64(binary.LittleEndian.Uint32(b[len(b)-tail:]))
	end := int64(len(b)-tail) - footer
	if footer <= 0 || end < head {
		return nil, errors.New("the Arrow file's footer length is out of range")
	}
	schema, recs, err := arrowipc.ReadStream(b[head:end])
	if err != nil {
		return nil, fmt.Errorf("reading the Arrow stream: %w", err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if schema == nil {
		return nil, errors.New("the Arrow file has no schema")
	}
	p := &preview{}
	for _, f := range schema.Fields() {
		p.Columns = append(p.Columns, f.Name)
	}
	for _, rec := range recs {
		if int(rec.NumCols()) != len(p.Columns) {
			return nil, fmt.Errorf("a batch has %d columns, the schema %d", rec.NumCols(), len(p.Columns))
		}
		for r := 0; r < int(rec.NumRows()) && len(p.Rows) < limit; r++ {
			row := make([]string, rec.NumCols())
			for c := range row {
				col := rec.Column(c)
				if col.IsNull(r) {
					row[c] = "null"
					continue
				}
				row[c] = clip(col.ValueStr(r))
			}
			p.Rows = append(p.Rows, row)
		}
		if len(p.Rows) >= limit {
			break
		}
	}
	return p, nil
}

func clip(s string) string {
	if len(s) <= maxCell {
		return s
	}
	cut := maxCell
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
