package lancefile

import (
	"context"
	"fmt"
	"os"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/pb/enc20pb"
	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// TestDump prints the page encodings of the file named by LANCECAT_DUMP; a
// development aid for looking at what a writer chose.
func TestDump(t *testing.T) {
	path := os.Getenv("LANCECAT_DUMP")
	if path == "" {
		t.Skip("set LANCECAT_DUMP to a .lance data file to print its encodings")
	}
	lf, err := OpenLocalFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	r, err := Open(context.Background(), lf)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(r.Version(), r.NumRows(), r.Schema())
	for i, c := range r.columns {
		for p, page := range c.GetPages() {
			var a anypb.Any
			_ = proto.Unmarshal(page.GetEncoding().GetDirect().GetEncoding(), &a)
			var m proto.Message = &enc21pb.PageLayout{}
			if r.Version() == V2_0 {
				m = &enc20pb.ArrayEncoding{}
			}
			_ = proto.Unmarshal(a.GetValue(), m)
			fmt.Printf("col %d page %d rows %d bufs %v: %s\n", i, p, page.GetLength(), page.GetBufferSizes(), prototext.MarshalOptions{}.Format(m))
		}
	}
}
