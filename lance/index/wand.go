package index

// Block-max top-k for multi-term matches (OR and AND) on one partition.
//
// Every posting block opens with its max score (f32) and its first doc id
// (the bit-packed initial value, or the tail's first fixed32/varint), so
// the blocks' doc ranges and bounds are known without decoding anything.
// The doc-id space is cut at every block start of every query term into
// intervals; an interval's bound is the sum of the max scores of the
// blocks covering it (for AND only intervals every term covers count).
// Intervals are visited best bound first, decoding (once) only the blocks
// they need; once the heap holds limit rows, the first interval whose
// bound cannot beat the heap's minimum ends the search. Scores are summed
// in query-term order, exactly as the exhaustive path sums them, so the
// answers (rows and float32 scores) are the same.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// bmTerm is one query term's posting list in a partition.
type bmTerm struct {
	id     uint32
	idf    float32
	blocks [][]byte
	first  []uint32  // first doc of each block
	maxs   []float32 // stored max score of each block
	total  int
	dec    []*bmBlock // decoded blocks, lazily
	// positions of each decoded posting entry (phrase), lazily
	pos [][]uint32
}

type bmBlock struct {
	docs, freqs []uint32
}

// bmInterval is [lo, hi) of doc ids with the block of each term covering
// it (-1: none).
type bmInterval struct {
	lo, hi uint32
	bound  float32
	blk    []int32
}

// openBMTerm reads the block starts and maxima of token id's posting.
func (p *ftsPart) openBMTerm(id uint32, idf float32) (*bmTerm, error) {
	lo, hi := p.posting.ValueOffsets(int(id))
	t := &bmTerm{id: id, idf: idf, total: int(p.lengths[id])}
	if t.total < 0 || (t.total+p.blockSize-1)/p.blockSize != int(hi-lo) {
		return nil, fmt.Errorf("%w: posting list of %d docs in %d blocks of %d", ErrCorrupt, t.total, hi-lo, p.blockSize)
	}
	for b := lo; b < hi; b++ {
		if p.blocks.IsNull(int(b)) {
			return nil, fmt.Errorf("%w: null posting block", ErrCorrupt)
		}
		blk := p.blocks.Value(int(b))
		if len(blk) < 5 {
			return nil, fmt.Errorf("%w: posting block of %d bytes", ErrCorrupt, len(blk))
		}
		first := uint32(0)
		full := int(b-lo) < int(hi-lo)-1 || t.total%p.blockSize == 0
		switch {
		case full || !p.varintTail:
			if len(blk) < 8 {
				return nil, fmt.Errorf("%w: posting block of %d bytes", ErrCorrupt, len(blk))
			}
			first = binary.LittleEndian.Uint32(blk[4:])
		default:
			v, k := uvarint32(blk[4:])
			if k <= 0 {
				return nil, fmt.Errorf("%w: posting tail varint", ErrCorrupt)
			}
			first = v
		}
		if n := len(t.first); n > 0 && first <= t.first[n-1] {
			return nil, fmt.Errorf("%w: posting blocks out of order", ErrCorrupt)
		}
		t.blocks = append(t.blocks, blk)
		t.first = append(t.first, first)
		t.maxs = append(t.maxs, math.Float32frombits(binary.LittleEndian.Uint32(blk)))
	}
	t.dec = make([]*bmBlock, len(t.blocks))
	return t, nil
}

// block decodes (once) block i of t.
func (p *ftsPart) block(t *bmTerm, i int) (*bmBlock, error) {
	if b := t.dec[i]; b != nil {
		return b, nil
	}
	n := p.blockSize
	if i == len(t.blocks)-1 {
		n = t.total - i*p.blockSize
	}
	b := &bmBlock{docs: make([]uint32, 0, n), freqs: make([]uint32, 0, n)}
	nd := uint32(len(p.rowIDs))
	var bad error
	err := decodePostingEach(t.blocks[i:i+1], n, p.blockSize, p.varintTail, func(d, f []uint32) {
		for _, x := range d {
			if x >= nd && bad == nil {
				bad = fmt.Errorf("%w: doc id %d beyond %d docs", ErrCorrupt, x, nd)
			}
		}
		b.docs = append(b.docs, d...)
		b.freqs = append(b.freqs, f...)
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	for k := 1; k < len(b.docs); k++ {
		if b.docs[k] <= b.docs[k-1] {
			return nil, fmt.Errorf("%w: posting doc ids not ascending", ErrCorrupt)
		}
	}
	t.dec[i] = b
	return b, nil
}

// bmIntervals cuts [0, nd) at every block start of terms; with all, only
// the intervals every term covers are kept.
func bmIntervals(terms []*bmTerm, nd uint32, all bool) []bmInterval {
	var cuts []uint32
	for _, t := range terms {
		cuts = append(cuts, t.first...)
	}
	slices.Sort(cuts)
	uniq := cuts[:0]
	for i, c := range cuts {
		if c < nd && (i == 0 || c != cuts[i-1]) {
			uniq = append(uniq, c)
		}
	}
	cur := make([]int, len(terms)) // next block of each term
	out := make([]bmInterval, 0, len(uniq))
	arena := make([]int32, len(uniq)*len(terms))
	for i, lo := range uniq {
		hi := nd
		if i+1 < len(uniq) {
			hi = uniq[i+1]
		}
		iv := bmInterval{lo: lo, hi: hi, blk: arena[i*len(terms) : (i+1)*len(terms) : (i+1)*len(terms)]}
		ok := true
		var bound float32
		for j, t := range terms {
			for cur[j] < len(t.first) && t.first[cur[j]] <= lo {
				cur[j]++
			}
			b := cur[j] - 1
			iv.blk[j] = int32(b)
			if b < 0 {
				if all {
					ok = false
				}
				continue
			}
			bound += t.maxs[b]
		}
		if !ok {
			continue
		}
		iv.bound = bound
		out = append(out, iv)
	}
	// best bound first; ties in doc order (deterministic)
	slices.SortStableFunc(out, func(a, b bmInterval) int { return cmp.Compare(b.bound, a.bound) })
	return out
}

// errNoPruning: block-max would visit most postings anyway (the blocks'
// maxima are all close to the top scores, as for frequent terms in short
// documents); the caller's term-at-a-time accumulation is cheaper then.
var errNoPruning = errors.New("block-max does not prune")

// searchBlockMax adds the best rows of a multi-term match on p to top
// (all, for AND). check, when set, is a further per-doc condition (phrase).
// An OR returns errNoPruning, with top untouched, when once the heap is
// full more than half of the intervals still could place a row.
func (p *ftsPart) searchBlockMax(terms []*bmTerm, all bool, boost, avgdl float32, top *rowHeap, allow func(uint64) bool,
	check func(d uint32, at []int) (bool, error)) error {
	ivs := bmIntervals(terms, uint32(len(p.rowIDs)), all)
	heads := make([][]uint32, len(terms))
	hfreq := make([][]uint32, len(terms))
	at := make([]int, len(terms)) // index of the head in its term's posting
	base := make([]int, len(terms))
	pos := make([]int, len(terms))
	// the stored maxima were scored by the builder with this partition's
	// statistics; a margin covers float rounding
	boundOf := func(iv *bmInterval) float32 {
		return (iv.bound*(1+1e-4) + float32(len(terms))*1e-6) * boost
	}
	probed := all
	offer := func(d uint32, score float32) error {
		x := ScoredRow{RowID: p.rowIDs[d], Score: score * boost}
		if !top.accepts(x) || allow != nil && !allow(x.RowID) {
			return nil
		}
		if check != nil {
			ok, err := check(d, at)
			if err != nil || !ok {
				return err
			}
		}
		top.offer(x)
		return nil
	}
	for i := range ivs {
		iv := &ivs[i]
		if len(top.h) >= top.limit {
			if boundOf(iv) < top.h[0].Score {
				return nil
			}
			if !probed {
				probed = true
				live := sort.Search(len(ivs)-i, func(k int) bool { return boundOf(&ivs[i+k]) < top.h[0].Score })
				if 2*live > len(ivs) {
					top.h = top.h[:0]
					return errNoPruning
				}
			}
		}
		short := -1
		for j, t := range terms {
			heads[j], hfreq[j] = nil, nil
			b := int(iv.blk[j])
			if b < 0 {
				continue
			}
			blk, err := p.block(t, b)
			if err != nil {
				return err
			}
			s := sort.Search(len(blk.docs), func(k int) bool { return blk.docs[k] >= iv.lo })
			e := s + sort.Search(len(blk.docs)-s, func(k int) bool { return blk.docs[s+k] >= iv.hi })
			heads[j], hfreq[j] = blk.docs[s:e], blk.freqs[s:e]
			base[j] = b*p.blockSize + s
			if short < 0 || e-s < len(heads[short]) {
				short = j
			}
		}
		if all {
			if err := p.conjunct(terms, heads, hfreq, base, at, pos, short, avgdl, offer); err != nil {
				return err
			}
			continue
		}
		clear(pos)
		for {
			// the smallest head doc
			d, any := uint32(math.MaxUint32), false
			for j := range terms {
				if pos[j] < len(heads[j]) && heads[j][pos[j]] <= d {
					d, any = heads[j][pos[j]], true
				}
			}
			if !any {
				break
			}
			var score float32
			for j, t := range terms {
				at[j] = -1
				if pos[j] < len(heads[j]) && heads[j][pos[j]] == d {
					score += t.idf * bm25DocWeight(hfreq[j][pos[j]], p.numTokens[d], avgdl)
					at[j] = base[j] + pos[j]
					pos[j]++
				}
			}
			if err := offer(d, score); err != nil {
				return err
			}
		}
	}
	return nil
}

// conjunct offers the docs every term's head holds: the shortest head's
// docs, each looked up in the others by advancing (galloping) cursors;
// scores are summed in term order as the exhaustive path does.
func (p *ftsPart) conjunct(terms []*bmTerm, heads, hfreq [][]uint32, base, at, pos []int, short int, avgdl float32,
	offer func(d uint32, score float32) error) error {
	for j := range terms {
		if len(heads[j]) == 0 {
			return nil
		}
	}
	clear(pos)
next:
	for k, d := range heads[short] {
		for j := range terms {
			if j == short {
				pos[j] = k
				continue
			}
			h := heads[j]
			q := pos[j]
			if q < len(h) && h[q] < d {
				// gallop, then binary search the bracket
				step := 1
				for q+step < len(h) && h[q+step] < d {
					q += step
					step *= 2
				}
				hi := min(q+step, len(h))
				q += sort.Search(hi-q, func(x int) bool { return h[q+x] >= d })
			}
			pos[j] = q
			if q >= len(h) {
				return nil
			}
			if h[q] != d {
				continue next
			}
		}
		var score float32
		for j, t := range terms {
			score += t.idf * bm25DocWeight(hfreq[j][pos[j]], p.numTokens[d], avgdl)
			at[j] = base[j] + pos[j]
		}
		if err := offer(d, score); err != nil {
			return err
		}
	}
	return nil
}

// entryPositions is the positions of entry k (its index in the posting
// list) of t: one list per entry (index_version 0/1) or the shared
// stream of its block, decoded once a block (format 2).
func (p *ftsPart) entryPositions(t *bmTerm, k int) ([]uint32, error) {
	if p.streams == nil {
		return p.positionsOf(t.id, k)
	}
	if t.pos == nil {
		t.pos = make([][]uint32, t.total)
	}
	if k < 0 || k >= t.total {
		return nil, fmt.Errorf("%w: positions of posting entry %d", ErrCorrupt, k)
	}
	if t.pos[k] != nil {
		return t.pos[k], nil
	}
	b := k / p.blockSize
	blk, err := p.block(t, b)
	if err != nil {
		return nil, err
	}
	lo, hi := p.streamOffsets.ValueOffsets(int(t.id))
	offs := p.streamOffsets.ListValues().(*array.Uint32).Uint32Values()[lo:hi]
	if p.streams.IsNull(int(t.id)) || len(offs) != len(t.blocks) {
		return nil, fmt.Errorf("%w: %d position blocks for %d posting blocks", ErrCorrupt, len(offs), len(t.blocks))
	}
	stream := p.streams.Value(int(t.id))
	start, end := offs[b], uint32(len(stream))
	if b+1 < len(offs) {
		end = offs[b+1]
	}
	if start > end || end > uint32(len(stream)) {
		return nil, fmt.Errorf("%w: position block %d at %d..%d of %d bytes", ErrCorrupt, b, start, end, len(stream))
	}
	pos, err := decodePositionBlock(stream[start:end], blk.freqs, !p.varintPositions)
	if err != nil {
		return nil, err
	}
	for i, f := range blk.freqs {
		t.pos[b*p.blockSize+i], pos = pos[:f:f], pos[f:]
		if f == 0 {
			t.pos[b*p.blockSize+i] = []uint32{}
		}
	}
	return t.pos[k], nil
}

// searchPhrase is Search of a phrase with a limit on one partition: the
// rows of the AND of its distinct tokens, visited block-max first, kept
// when the tokens stand at the phrase's relative positions (Slop apart at
// most); scored, as the exhaustive phrase, by the AND match of its tokens.
func (r *ftsReader) searchPhrase(q FTSQuery, limit int, allow func(uint64) bool) ([]ScoredRow, error) {
	toks := r.tok.Tokenize(q.Terms, nil)
	top := &rowHeap{limit: limit}
	if len(toks) == 0 {
		return nil, nil
	}
	boost := q.Boost
	if boost == 0 {
		boost = 1
	}
	p := r.parts[0]
	uniq := r.queryTokens(q.Terms)
	slot := map[string]int{}
	terms := make([]*bmTerm, len(uniq))
	for i, t := range uniq {
		id, ok := p.tokens[t.Text]
		if !ok {
			return nil, nil
		}
		bt, err := p.openBMTerm(id, bm25IDF(r.docFreq(t.Text), r.stats.numDocs))
		if err != nil {
			return nil, err
		}
		terms[i] = bt
		slot[t.Text] = i
	}
	if p.positions == nil && p.streams == nil {
		return nil, fmt.Errorf("%w: the index has no positions (create it with with_position)", ErrUnsupported)
	}
	of := make([]int, len(toks)) // each phrase token's term
	for i, t := range toks {
		of[i] = slot[t.Text]
	}
	per := make([][]uint32, len(toks))
	check := func(_ uint32, at []int) (bool, error) {
		for i := range toks {
			j := of[i]
			ps, err := p.entryPositions(terms[j], at[j])
			if err != nil {
				return false, err
			}
			per[i] = ps
		}
		return phraseMatch(per, toks, q.Slop), nil
	}
	if err := p.searchBlockMax(terms, true, boost, r.stats.avgdl(), top, allow, check); err != nil {
		return nil, err
	}
	return top.sorted(), nil
}

// phraseMatch is phraseAt over one doc's positions of each phrase token.
func phraseMatch(per [][]uint32, toks []Token, slop int) bool {
	for _, start := range per[0] {
		prev := start
		ok := true
		for i := 1; i < len(toks); i++ {
			want := prev + (toks[i].Position - toks[i-1].Position)
			found := false
			for _, p := range per[i] {
				if p >= want && int64(p)-int64(want) <= int64(slop) {
					prev, found = p, true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// searchAnd adds the rows holding every term to top: the shortest posting
// list's docs are the candidates, each further list (shortest first) is
// merged against them, and a block whose doc range holds no candidate left
// is not decoded. Weights are kept per term and summed in query-term order
// at the end, as the exhaustive path sums them.
func (p *ftsPart) searchAnd(terms []*bmTerm, boost, avgdl float32, top *rowHeap, allow func(uint64) bool) error {
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(terms[a].total, terms[b].total) })
	nd := uint32(len(p.rowIDs))
	var cand []uint32
	w := make([][]float32, len(terms))
	for oi, j := range order {
		t := terms[j]
		if oi > 0 && len(cand) == 0 {
			return nil
		}
		kept := 0
		ci := 0
		wj := make([]float32, 0, len(cand))
		for b := range t.blocks {
			if oi > 0 {
				hi := nd
				if b+1 < len(t.blocks) {
					hi = t.first[b+1]
				}
				for ci < len(cand) && cand[ci] < t.first[b] {
					ci++
				}
				if ci >= len(cand) {
					break
				}
				if cand[ci] >= hi {
					continue // no candidate in this block's range
				}
			}
			n := p.blockSize
			if b == len(t.blocks)-1 {
				n = t.total - b*p.blockSize
			}
			var bad error
			err := decodePostingEach(t.blocks[b:b+1], n, p.blockSize, p.varintTail, func(docs, freqs []uint32) {
				for k, d := range docs {
					if d >= nd {
						if bad == nil {
							bad = fmt.Errorf("%w: doc id %d beyond %d docs", ErrCorrupt, d, nd)
						}
						return
					}
					if oi == 0 {
						cand = append(cand, d)
						wj = append(wj, t.idf*bm25DocWeight(freqs[k], p.numTokens[d], avgdl))
						continue
					}
					for ci < len(cand) && cand[ci] < d {
						ci++
					}
					if ci < len(cand) && cand[ci] == d {
						// keep candidate ci: compact in place
						cand[kept] = d
						for _, o := range order[:oi] {
							w[o][kept] = w[o][ci]
						}
						wj = append(wj, t.idf*bm25DocWeight(freqs[k], p.numTokens[d], avgdl))
						kept++
						ci++
					}
				}
			})
			if err == nil {
				err = bad
			}
			if err != nil {
				return err
			}
		}
		if oi > 0 {
			cand = cand[:kept]
			for _, o := range order[:oi] {
				w[o] = w[o][:kept]
			}
		}
		w[j] = wj
	}
	for i, d := range cand {
		var score float32
		for j := range terms {
			score += w[j][i]
		}
		x := ScoredRow{RowID: p.rowIDs[d], Score: score * boost}
		if top.accepts(x) && (allow == nil || allow(x.RowID)) {
			top.offer(x)
		}
	}
	return nil
}
