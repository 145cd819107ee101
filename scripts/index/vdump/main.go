// Command vdump prints what a vector index segment's files hold: each
// file's schema metadata and global buffers (decoded as Lance's IVF and
// Tensor messages where they parse), the first rows, and per-partition
// row ranges: the tool used to measure the SDK's IVF_FLAT / IVF_PQ files
// (lance/index/ivf.go).
//
//	go run ./scripts/index/vdump /path/to/table.lance/_indices/<uuid>
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/indexpb"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ctx := context.Background()
	for _, name := range []string{"index.idx", "auxiliary.idx"} {
		lf, err := lancefile.OpenLocalFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		r, err := lancefile.Open(ctx, lf)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("== %s version %v rows %d globals %d\n%s\n", name, r.Version(), r.NumRows(), r.NumGlobalBuffers(), r.Schema())
		for i := 1; i < r.NumGlobalBuffers(); i++ {
			b, err := r.GlobalBuffer(ctx, i)
			if err != nil {
				return err
			}
			fmt.Printf("global %d: %d bytes\n", i, len(b))
			var ivf indexpb.IVF
			if err := proto.Unmarshal(b, &ivf); err == nil && len(ivf.GetLengths()) > 0 {
				t := ivf.GetCentroidsTensor()
				fmt.Printf("  IVF offsets=%v lengths=%v loss=%v centroids(deprecated)=%d tensor type=%v shape=%v data=%d first=%v\n",
					ivf.GetOffsets(), ivf.GetLengths(), ivf.Loss, len(ivf.GetCentroids()), t.GetDataType(), t.GetShape(), len(t.GetData()), floats(t.GetData(), 4))
				continue
			}
			var t indexpb.Tensor
			if err := proto.Unmarshal(b, &t); err == nil && len(t.GetShape()) > 0 {
				fmt.Printf("  Tensor type=%v shape=%v data=%d first=%v\n", t.GetDataType(), t.GetShape(), len(t.GetData()), floats(t.GetData(), 8))
				continue
			}
			fmt.Printf("  raw %x\n", b[:min(64, len(b))])
		}
		rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: 4})
		if err != nil {
			return err
		}
		for i, c := range rec.Columns() {
			fmt.Printf("  %s: %v\n", rec.ColumnName(i), c)
		}
		rec.Release()
		lf.Close()
	}
	return nil
}

func floats(b []byte, n int) []float32 {
	var out []float32
	for i := 0; i+4 <= len(b) && len(out) < n; i += 4 {
		out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return out
}
