// Command dump prints the index metadata of a Lance table's latest version
// and the contents of every index file (schema, metadata, first rows): the
// tool used to measure the SDK's scalar index files (lance/index/doc.go).
//
//	go run ./scripts/index/dump /path/to/table.lance
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/storage"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ctx := context.Background()
	fs, err := storage.NewFS(dir)
	if err != nil {
		return err
	}
	ds := lance.NewDataset(fs)
	v, err := ds.OpenLatest(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("version %d manifest index_section=%d\n", v.Number(), v.Manifest().GetIndexSection())
	for _, f := range v.Manifest().GetFragments() {
		fmt.Printf("fragment %d rows %d\n", f.GetId(), f.GetPhysicalRows())
	}
	fmt.Println(prototext.Format(v.Transaction()))
	for _, idx := range v.Indices() {
		fmt.Println("----", prototext.Format(idx))
		fmt.Printf("details type_url=%s value=%x\n", idx.GetIndexDetails().GetTypeUrl(), idx.GetIndexDetails().GetValue())
		fmt.Printf("fragment_bitmap=%x\n", idx.GetFragmentBitmap())
		d := filepath.Join(dir, lance.IndexDir(idx))
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			fh, err := os.Open(filepath.Join(d, e.Name()))
			if err != nil {
				return err
			}
			st, _ := fh.Stat()
			r, err := lancefile.Open(ctx, lancefile.NewReaderAtSource(fh, st.Size()))
			if err != nil {
				return fmt.Errorf("%s: %w", e.Name(), err)
			}
			fmt.Printf("== %s version %v rows %d\nschema %s\n", e.Name(), r.Version(), r.NumRows(), r.Schema())
			rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: 12})
			if err != nil {
				return fmt.Errorf("%s: %w", e.Name(), err)
			}
			for i, c := range rec.Columns() {
				fmt.Printf("  %s: %v\n", rec.ColumnName(i), c)
			}
			rec.Release()
			fh.Close()
		}
	}
	return nil
}
