package lance

// Index optimization of an INVERTED (full-text) index, as Lance's
// InvertedIndex::update does for an index of the current layout (only the
// new rows are read): the unindexed fragments' documents are tokenized
// with the index's own tokenizer into a new partition, and the old and new
// partitions are merged (Lance's size-based merger: one partition up to
// 4 GiB) into one new segment that replaces the old ones. lancecat writes
// it in its own layout (index_version 0, the arrow token set).

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// updateFTS writes one segment with segs' documents and those of the
// unindexed fragments frags of column.
func (d *Dataset) updateFTS(ctx context.Context, v *Version, segs []*tablepb.IndexMetadata, column string, frags []uint64, dst index.Store) ([]index.File, error) {
	srcs := make([]index.Store, 0, len(segs))
	for _, s := range segs {
		if !isFTSSegment(s) {
			return nil, fmt.Errorf("%w: segments of different types", ErrCorruptManifest)
		}
		st, err := d.baseStore(v, s.BaseId)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, index.BucketStore(st, IndexDir(s)))
	}
	return index.UpdateFTS(ctx, srcs, dst, func(b *index.FTSBuilder) error {
		sc, err := d.Scan(ctx, ScanOptions{Columns: []string{column}, At: v, Fragments: frags, WithRowID: true})
		if err != nil {
			return err
		}
		defer sc.Release()
		for sc.Next() {
			rec := sc.RecordBatch()
			ids, ok := rec.Column(1).(*array.Uint64)
			if !ok {
				return fmt.Errorf("lance: scan returned _rowid of type %s", rec.Column(1).DataType())
			}
			if err := b.Add(rec.Column(0), ids.Uint64Values()); err != nil {
				return err
			}
		}
		return sc.Err()
	})
}
