package tableindex

// Remapping an INVERTED (full-text) index segment through a compaction,
// as Lance's InvertedIndex::remap does: every partition rewritten with
// the moved rows' new addresses and the dropped rows removed, under a new
// uuid, in lancecat's layout (index_version 0, the arrow token set, which
// both supported SDKs read); the manifest entry keeps its details.

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// isFTSSegment reports whether seg is an INVERTED index segment.
func isFTSSegment(seg *tablepb.IndexMetadata) bool {
	return seg.GetIndexDetails().GetTypeUrl() == index.InvertedDetailsURL
}

// remapFTSSegment is RemapIndexSegment for an INVERTED segment.
func remapFTSSegment(ctx context.Context, d *lance.Dataset, ver *lance.Version, seg *tablepb.IndexMetadata, m index.RowMap) (lance.RewrittenIndex, error) {
	src, err := d.BaseStore(ver, seg.BaseId)
	if err != nil {
		return lance.RewrittenIndex{}, err
	}
	id := uuid.New()
	out := lance.RewrittenIndex{Old: seg, NewID: id}
	dst := index.BucketStore(d.Store(), lance.IndicesDir+id.String()+"/")
	if out.Files, err = index.RemapFTS(ctx, index.BucketStore(src, lance.IndexDir(seg)), dst, m); err != nil {
		return lance.RewrittenIndex{}, fmt.Errorf("index %s: %w", seg.GetName(), err)
	}
	// Lance answers the params' details and index_version 0 for the
	// arrow token set it writes; the manifest entry keeps its own.
	out.Details = proto.CloneOf(seg.GetIndexDetails())
	out.Version = 0
	return out, nil
}
