// Command ftsdump prints every row of one Lance file (an FTS index part such
// as part_0_docs.lance): the tool used to measure the SDK's INVERTED index
// files (lance/index/inverted doc comments).
//
//	go run ./scripts/index/ftsdump /path/to/_indices/<uuid>/part_0_docs.lance
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(path string) error {
	ctx := context.Background()
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	r, err := lancefile.Open(ctx, lancefile.NewReaderAtSource(fh, st.Size()))
	if err != nil {
		return err
	}
	fmt.Printf("version %v rows %d\nschema %s\n", r.Version(), r.NumRows(), r.Schema())
	rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: -1})
	if err != nil {
		return err
	}
	defer rec.Release()
	for i, c := range rec.Columns() {
		fmt.Printf("%s: %v\n", rec.ColumnName(i), c)
	}
	return nil
}
