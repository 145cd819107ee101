package console

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// preview is a query answer as a grid of strings.
type preview struct {
	Columns []string
	Rows    [][]string
}

// maxCell bounds a shown value (a long string or a vector is cut, marked with an ellipsis).
const maxCell = 120

// decodePreview reads the query door's answer (an Arrow IPC file) into at most limit rows of
// display strings. It is a decoder of server output, but it is fuzzed all the same: a malformed
// answer must be an error, never a crash of the page.
func decodePreview(b []byte, limit int) (*preview, error) {
	rd, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("reading the Arrow file: %w", err)
	}
	defer rd.Close()
	p := &preview{}
	for _, f := range rd.Schema().Fields() {
		p.Columns = append(p.Columns, f.Name)
	}
	for i := 0; i < rd.NumRecords() && len(p.Rows) < limit; i++ {
		rec, err := rd.RecordBatch(i)
		if err != nil {
			return nil, fmt.Errorf("reading batch %d: %w", i, err)
		}
		if int(rec.NumCols()) != len(p.Columns) {
			return nil, fmt.Errorf("batch %d has %d columns, the schema %d", i, rec.NumCols(), len(p.Columns))
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
