package tableindex

// Index optimization of an INVERTED (full-text) index, as the SDKs'
// optimize() leaves it (measured with 0.31.0 and 0.39.0,
// TestFTSOptimizeSDK): the unindexed fragments' documents are tokenized
// with the index's own tokenizer into a new partition numbered after the
// old ones (partitions [0 1] after one optimize), and one new segment with
// the old and new partitions replaces the old segment. lancecat writes it
// in its own layout (index_version 0, the arrow token set), so the old
// partitions are rewritten too. Documents without tokens count for an
// index of 0.31.0's Lance, as its own new partition counts them.

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// updateFTS writes one segment with segs' documents and those of the
// unindexed fragments frags of column.
func updateFTS(ctx context.Context, d *lance.Dataset, v *lance.Version, segs []*tablepb.IndexMetadata, column string, frags []uint64, dst index.Store) ([]index.File, error) {
	srcs := make([]index.Store, 0, len(segs))
	for _, s := range segs {
		if !isFTSSegment(s) {
			return nil, fmt.Errorf("%w: segments of different types", lance.ErrCorruptManifest)
		}
		st, err := d.BaseStore(v, s.BaseId)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, index.BucketStore(st, lance.IndexDir(s)))
	}
	return index.UpdateFTS(ctx, srcs, dst, func(b *index.FTSBuilder) error {
		sc, err := d.Scan(ctx, lance.ScanOptions{Columns: []string{column}, At: v, Fragments: frags, WithRowID: true})
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
