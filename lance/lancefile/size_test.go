package lancefile

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSizeParity rewrites the data file named by LANCECAT_SIZE (one
// written by the official SDK) with our writer, in its own file format,
// and prints the bytes each column's pages take in both; a development aid
// for size parity.
func TestSizeParity(t *testing.T) {
	r := openEnvFile(t, "LANCECAT_SIZE", "an SDK-written .lance data file to compare sizes")
	rec, err := r.Read(context.Background(), memory.DefaultAllocator, ReadOptions{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	data := writeFile(t, rec.Schema(), WriterOptions{Version: r.Version()}, rec)
	ours := openBytes(t, data)
	colBytes := func(r *Reader, i int) (n uint64) {
		for _, p := range r.columns[i].GetPages() {
			for _, s := range p.GetBufferSizes() {
				n += s
			}
		}
		return n
	}
	var sdkTotal, ourTotal uint64
	for i := range r.columns {
		a, b := colBytes(r, i), colBytes(ours, i)
		sdkTotal += a
		ourTotal += b
		fmt.Printf("column %2d: sdk %9d  ours %9d  %.2fx\n", i, a, b, float64(b)/float64(max(a, 1)))
	}
	fmt.Printf("pages: sdk %d ours %d (%.2fx); files: sdk %d ours %d (%.2fx)\n", sdkTotal, ourTotal, float64(ourTotal)/float64(sdkTotal),
		r.src.Size(), len(data), float64(len(data))/float64(r.src.Size()))
}
