package index

// Rewriting an INVERTED index segment (any layout lancecat reads) into
// lancecat's layout (index_version 0, arrow token set, inverted_build.go),
// as Lance's InvertedIndexBuilder::remap does after a compaction: per
// partition, every doc's row address mapped, the docs of rows compaction
// dropped removed (the later docs' ids shift down), tokens left without
// docs dropped, block maxima recomputed; the partition ids, the params
// and so the tokenizer stay.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// ftsStopWordsKey is a metadata.lance key lancecat adds when it rewrites
// an index of SDK 0.31.0's Lance (whose English stop words are Lucene's):
// the arrow token set would otherwise read as the newer list (NLTK).
const ftsStopWordsKey = "lancecat_stop_words"

// RemapFTS writes into dst a copy of the INVERTED segment in src with its
// row ids mapped by m (rows m does not keep are removed from the index).
func RemapFTS(ctx context.Context, src, dst Store, m RowMap) ([]File, error) {
	rd, err := OpenFTS(ctx, src)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	r := rd.(*ftsReader)
	var files []File
	for i, p := range r.parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := r.partBuilder(p, m)
		if err != nil {
			return nil, err
		}
		fs, err := b.writePartition(ctx, dst, r.partIDs[i])
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	f, err := r.writeMetadata(ctx, dst, r.partIDs)
	if err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// writeMetadata writes metadata.lance for partitions with r's params.
func (r *ftsReader) writeMetadata(ctx context.Context, dst Store, partitions []uint64) (File, error) {
	var extra map[string]string
	if r.stopList == "lucene" {
		extra = map[string]string{ftsStopWordsKey: "lucene"}
	}
	return newFTSBuilder(r.tok, BuildOptions{}).writeMetadata(ctx, dst, partitions, r.paramsJSON, extra)
}

// partBuilder loads partition p into a builder, its row ids mapped by m
// (nil: kept as they are).
func (r *ftsReader) partBuilder(p *ftsPart, m RowMap) (*FTSBuilder, error) {
	withPos := r.tok.p.WithPosition
	if withPos && p.positions == nil && p.streams == nil {
		return nil, fmt.Errorf("%w: an index with_position without positions", ErrCorrupt)
	}
	b := newFTSBuilder(r.tok, BuildOptions{})
	post := &ftsPostings{off: []int{0}, posOff: []int{0}}
	b.post = post
	newDoc := make([]int32, len(p.rowIDs))
	for d, row := range p.rowIDs {
		nr, keep := row, true
		if m != nil {
			nr, keep = m(row)
		}
		if !keep {
			newDoc[d] = -1
			continue
		}
		newDoc[d] = int32(len(b.rowIDs))
		b.rowIDs = append(b.rowIDs, nr)
		b.numTokens = append(b.numTokens, p.numTokens[d])
		b.total += uint64(p.numTokens[d])
	}
	texts := make([]string, 0, len(p.tokens))
	for t := range p.tokens {
		texts = append(texts, t)
	}
	slices.Sort(texts)
	for _, text := range texts {
		id := p.tokens[text]
		if int(id) >= len(p.lengths) {
			return nil, fmt.Errorf("%w: token id %d of %d posting lists", ErrCorrupt, id, len(p.lengths))
		}
		docs, freqs, err := p.postingOf(id)
		if err != nil {
			return nil, err
		}
		var pos [][]uint32
		if withPos {
			if pos, err = p.positionsFor(id, freqs); err != nil {
				return nil, err
			}
		}
		n0 := len(post.docs)
		for k, d := range docs {
			if int(d) >= len(newDoc) {
				return nil, fmt.Errorf("%w: doc id %d beyond %d docs", ErrCorrupt, d, len(newDoc))
			}
			if newDoc[d] < 0 {
				continue
			}
			post.docs = append(post.docs, uint32(newDoc[d]))
			post.freqs = append(post.freqs, freqs[k])
			if withPos {
				if len(pos[k]) != int(freqs[k]) {
					return nil, fmt.Errorf("%w: %d positions for frequency %d", ErrCorrupt, len(pos[k]), freqs[k])
				}
				post.pos = append(post.pos, pos[k]...)
			}
		}
		if len(post.docs) == n0 {
			continue // Lance drops a token without docs
		}
		post.tokens = append(post.tokens, text)
		post.off = append(post.off, len(post.docs))
		post.posOff = append(post.posOff, len(post.pos))
	}
	return b, nil
}

// UpdateFTS writes into dst the INVERTED segments in srcs (one index's
// segments, oldest first) with the documents add gives as a partition of
// their own, numbered after the old ones, as the SDKs' optimize() leaves
// an index (measured with 0.31.0 and 0.39.0: partitions [0 1] after one
// optimize; TestFTSOptimizeSDK). The old partitions are rewritten in
// lancecat's layout (the token set format is the index's, not a
// partition's). add is called with a builder of the index's tokenizer
// whose Add takes the new rows in ascending row id order.
func UpdateFTS(ctx context.Context, srcs []Store, dst Store, add func(*FTSBuilder) error) ([]File, error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("%w: no segment to update", ErrCorrupt)
	}
	var first *ftsReader
	type oldPart struct {
		r  *ftsReader
		p  *ftsPart
		id uint64
	}
	var parts []oldPart
	seen := map[uint64]bool{}
	renumber := false
	for i, src := range srcs {
		rd, err := OpenFTS(ctx, src)
		if err != nil {
			return nil, err
		}
		r := rd.(*ftsReader)
		defer r.Close()
		if i == 0 {
			first = r
		} else if r.paramsJSON != first.paramsJSON || r.stopList != first.stopList {
			return nil, fmt.Errorf("%w: the index's segments have different tokenizers", ErrUnsupported)
		}
		for j, p := range r.parts {
			id := r.partIDs[j]
			renumber = renumber || seen[id]
			seen[id] = true
			parts = append(parts, oldPart{r, p, id})
		}
	}
	var files []File
	var ids []uint64
	next := uint64(0)
	for i, op := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := op.id
		if renumber {
			id = uint64(i) // several segments: their partitions one after another
		}
		next = max(next, id+1)
		b, err := op.r.partBuilder(op.p, nil)
		if err != nil {
			return nil, err
		}
		fs, err := b.writePartition(ctx, dst, id)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
		ids = append(ids, id)
	}
	nb := newFTSBuilder(first.tok, BuildOptions{})
	nb.countEmpty = first.stopList == "lucene"
	if err := add(nb); err != nil {
		return nil, err
	}
	if nb.flush(); len(nb.rowIDs) > 0 {
		fs, err := nb.writePartition(ctx, dst, next)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
		ids = append(ids, next)
	}
	f, err := first.writeMetadata(ctx, dst, ids)
	if err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// FTSLayout describes an INVERTED segment's files: its partition ids and
// token set format, as metadata.lance names them.
func FTSLayout(ctx context.Context, st Store) (partitions []uint64, tokenSet string, err error) {
	rec, r, err := readAll(ctx, st, FTSMetadataFile, nil)
	if err != nil {
		return nil, "", err
	}
	rec.Release()
	md := r.Schema().Metadata()
	ps, _ := md.GetValue("partitions")
	if err := json.Unmarshal([]byte(ps), &partitions); err != nil {
		return nil, "", fmt.Errorf("%w: metadata.lance partitions: %v", ErrCorrupt, err)
	}
	tokenSet, _ = md.GetValue("token_set_format")
	return partitions, tokenSet, nil
}
