package lance

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// TestManifestSummary: the listing's field-skipping decoder reads the same
// version and timestamp as a full decode, whatever else the manifest holds.
func TestManifestSummary(t *testing.T) {
	full := testManifestFile(7, fragment(0, 100, 0), fragment(1, 50, 5))
	noTime := testManifestFile(9)
	noTime.Manifest.Timestamp = nil
	// Unknown fields (newer writers) before and after the ones we want.
	unknown := testManifestFile(11, fragment(0, 1, 0))
	unknown.Manifest.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 5))

	for _, f := range []*ManifestFile{full, noTime, unknown, {Manifest: &tablepb.Manifest{Version: 3}}} {
		data := encode(t, f)
		sum, err := decodeManifestSummary(bytesRange(data))
		assert.NilError(t, err)
		assert.Equal(t, sum.Version, f.Manifest.GetVersion())
		assert.Assert(t, sum.Timestamp.Equal(manifestTime(f)))
	}

	// A truncated field inside the manifest message is corrupt.
	body, err := proto.Marshal(full.Manifest)
	assert.NilError(t, err)
	framed := frameManifest(body[:len(body)-1])
	_, err = decodeManifestSummary(bytesRange(framed))
	assert.Check(t, errors.Is(err, ErrCorruptManifest), "got %v", err)
}

// frameManifest wraps raw Manifest message bytes in the file framing (no
// sections): length prefix, message, footer.
func frameManifest(msg []byte) []byte {
	out := protowire.AppendFixed32(nil, uint32(len(msg)))
	out = append(out, msg...)
	out = protowire.AppendFixed64(out, 0) // manifest position
	out = append(out, 0, 0, 2, 0)         // version
	return append(out, manifestMagic...)
}
