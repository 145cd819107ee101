package lancefile

import (
	"fmt"
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
	r := openEnvFile(t, "LANCECAT_DUMP", "a .lance data file to print its encodings")
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
