// Command mkidx builds a scalar index on a Lance table with lancecat's
// writer (manual interop checks against the SDK):
//
//	go run ./scripts/index/mkidx /path/to/table.lance column TYPE [name]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/storage"
)

var stopProfile = func() {}

func main() {
	defer stopProfile()
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: mkidx table column TYPE [name]")
		os.Exit(2)
	}
	fs, err := storage.NewFS(os.Args[1])
	if err == nil {
		var t index.Type
		if t, err = index.ParseType(os.Args[3]); err == nil {
			opts := tableindex.ScalarIndexOptions{Column: os.Args[2], Type: t, Replace: true}
			if len(os.Args) > 4 {
				opts.Name = os.Args[4]
			}
			var v *lance.Version
			if v, err = tableindex.CreateScalarIndex(context.Background(), lance.NewDataset(fs), opts); err == nil {
				fmt.Println("version", v.Number())
			}
		}
	}
	if err != nil {
		stopProfile()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
