package lancefile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

func seedFiles(f *testing.F) [][]byte {
	paths, _ := filepath.Glob("testdata/*/*.lance/data/*.lance")
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzReadFooter opens arbitrary bytes as a file and reads everything:
// corrupt input must give an error, never a panic or a leak.
func FuzzReadFooter(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
		f.Add(b[len(b)-200:])
	}
	f.Add([]byte("LANC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= FooterSize {
			_, _ = ParseFooter(data[len(data)-FooterSize:], int64(len(data)))
		}
		ctx := context.Background()
		r, err := Open(ctx, NewReaderAtSource(bytes.NewReader(data), int64(len(data))))
		// A valid small file can declare millions of (all-null) rows; reading
		// those allocates for them by design, so keep fuzz inputs small.
		if err != nil || r.NumRows() > 1<<16 {
			return
		}
		mem := testenv.CheckedAllocator(t)
		rec, err := r.Read(ctx, mem, ReadOptions{Limit: -1})
		if err == nil {
			rec.Release()
		}
		// Part of the rows, and a sparse take: the paths that decode only
		// the chunks around the rows, from the chunk metadata.
		n := r.NumRows()
		if n == 0 {
			return
		}
		if rec, err = r.Read(ctx, mem, ReadOptions{Offset: int64(n / 3), Limit: 5}); err == nil {
			rec.Release()
		}
		if rec, err = r.Take(ctx, mem, []uint64{n - 1, n / 2}, ReadOptions{}); err == nil {
			rec.Release()
		}
	})
}

// FuzzDecodePage21 decodes one 2.1 or 2.2 page from an arbitrary layout
// and buffers (seeded with the pages of the 2.1 and 2.2 test files).
func FuzzDecodePage21(f *testing.F) {
	for _, b := range seedFiles(f) {
		r, err := Open(context.Background(), NewReaderAtSource(bytes.NewReader(b), int64(len(b))))
		if err != nil || r.Version() == V2_0 {
			continue
		}
		for _, c := range r.columns {
			for _, p := range c.GetPages() {
				bufs, err := r.readPageBuffers(context.Background(), p)
				if err != nil {
					f.Fatal(err)
				}
				var a anypb.Any
				if err := proto.Unmarshal(p.GetEncoding().GetDirect().GetEncoding(), &a); err != nil {
					f.Fatal(err)
				}
				for len(bufs) < 4 {
					bufs = append(bufs, nil)
				}
				f.Add(a.GetValue(), uint32(p.GetLength()), bufs[0], bufs[1], bufs[2], bufs[3])
			}
		}
	}
	f.Fuzz(func(t *testing.T, layout []byte, rows uint32, b0, b1, b2, b3 []byte) {
		enc, err := proto.Marshal(&anypb.Any{TypeUrl: "/lance.encodings21.PageLayout", Value: layout})
		if err != nil {
			return
		}
		page := &file2pb.ColumnMetadata_Page{
			Length:   uint64(rows % (1 << 16)),
			Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: enc}}},
		}
		// decodePage21 may decode in place: it gets copies, not the fuzzer's inputs.
		_, err = decodePage21(page, [][]byte{slices.Clone(b0), slices.Clone(b1), slices.Clone(b2), slices.Clone(b3)}, nil)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error without a kind: %v", err)
		}
	})
}
