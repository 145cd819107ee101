package index

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// NGRAM (Lance's ngram.rs; measured on files pylance 4.0.0 and 14.0.2
// wrote): ngram_postings.lance, one row per trigram, ascending
//
//	tokens        uint32 nullable  the trigram's token
//	posting_list  binary           the row ids holding it: a roaring64
//	                               treemap in its portable format (u64
//	                               count, then u32 key + 32-bit roaring
//	                               bitmap per bucket); field metadata
//	                               lance-encoding:compression = none
//
// index_details /lance.table.NGramIndexDetails, empty; index_version 0
// (the lists hold row ids; 1, from Lance 14, row addresses).
//
// A string is lowercased and ASCII-folded, split into its character
// trigrams, and those of ASCII letters and digits only are kept; a
// trigram's token is sum(pos(c_i) * 37^(2-i)) with pos 1..10 for '0'..'9'
// and 11..36 for 'a'..'z'. Token 0 lists the rows whose value is null.
// contains(col, s) intersects the lists of s's trigrams (a superset of
// the matches, rechecked); a needle without a trigram tells nothing.

// NGramFile is the NGRAM index file.
const NGramFile = "ngram_postings.lance"

const ngramSpan = 37

// ngramToken is the token of a trigram of ASCII letters (lower case) and
// digits.
func ngramToken(g []byte) uint32 {
	var t uint32
	for _, c := range g {
		var p uint32
		if c <= '9' {
			p = uint32(c-'0') + 1
		} else {
			p = uint32(c-'a') + 11
		}
		t = t*ngramSpan + p
	}
	return t
}

func isASCIIAlnumLower(c rune) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' }

// ngramTokens appends the tokens of text as Lance's index makes them.
func ngramTokens(text string, out []uint32) []uint32 {
	s := fold(lower(text))
	var w [3]rune
	n := 0
	for _, r := range s {
		w[0], w[1], w[2] = w[1], w[2], r
		n++
		if n >= 3 && isASCIIAlnumLower(w[0]) && isASCIIAlnumLower(w[1]) && isASCIIAlnumLower(w[2]) {
			out = append(out, ngramToken([]byte{byte(w[0]), byte(w[1]), byte(w[2])}))
		}
	}
	return out
}

// needleTokens are the tokens a row containing needle as a substring
// surely has: the trigrams of the needle's runs of ASCII letters and
// digits (lowercased). Other characters are left out: how Lance lowercases
// and folds them is not needed to prune soundly.
func needleTokens(needle string) []uint32 {
	var out []uint32
	var w [3]byte
	n := 0
	for _, r := range needle {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if !isASCIIAlnumLower(r) {
			n = 0
			continue
		}
		w[0], w[1], w[2] = w[1], w[2], byte(r)
		n++
		if n >= 3 {
			out = append(out, ngramToken(w[:]))
		}
	}
	return out
}

// NGramSearchable: can an NGRAM index narrow contains(col, s) for one of
// the needles (has one a trigram of ASCII letters and digits)?
func NGramSearchable(needles ...string) bool {
	for _, s := range needles {
		if len(needleTokens(s)) > 0 {
			return true
		}
	}
	return false
}

type ngramBuilder struct {
	lists map[uint32]*roaring64.Bitmap
	rows  uint64
	opts  BuildOptions
	buf   []uint32
}

func newNGramBuilder(dt arrow.DataType, opts BuildOptions) (Builder, error) {
	if dt.ID() != arrow.STRING && dt.ID() != arrow.LARGE_STRING {
		return nil, fmt.Errorf("%w: an NGRAM index needs a string column, not %s", ErrUnsupported, dt)
	}
	return &ngramBuilder{lists: map[uint32]*roaring64.Bitmap{}, opts: opts}, nil
}

func (b *ngramBuilder) Rows() uint64 { return b.rows }

func (b *ngramBuilder) list(t uint32) *roaring64.Bitmap {
	l := b.lists[t]
	if l == nil {
		l = roaring64.New()
		b.lists[t] = l
	}
	return l
}

func (b *ngramBuilder) Add(values arrow.Array, ids []uint64) error {
	if values.Len() != len(ids) {
		return fmt.Errorf("lance index: %d values for %d row ids", values.Len(), len(ids))
	}
	var str func(i int) string
	switch a := values.(type) {
	case *array.String:
		str = a.Value
	case *array.LargeString:
		str = a.Value
	default:
		return fmt.Errorf("lance index: NGRAM values of type %s", values.DataType())
	}
	b.rows += uint64(len(ids))
	for i, id := range ids {
		if values.IsNull(i) {
			b.list(0).Add(id)
			continue
		}
		b.buf = ngramTokens(str(i), b.buf[:0])
		for _, t := range b.buf {
			b.list(t).Add(id)
		}
	}
	return nil
}

func (b *ngramBuilder) Finish(ctx context.Context, st Store) ([]File, error) {
	mem := b.opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	tokens := make([]uint32, 0, len(b.lists))
	for t := range b.lists {
		tokens = append(tokens, t)
	}
	slices.Sort(tokens)
	posting := make([][]byte, len(tokens))
	for i, t := range tokens {
		enc, err := b.lists[t].ToBytes()
		if err != nil {
			return nil, err
		}
		posting[i] = enc
	}
	b.lists = nil
	tb := array.NewUint32Builder(mem)
	tb.AppendValues(tokens, nil)
	ta := tb.NewArray()
	tb.Release()
	defer ta.Release()
	pb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	pb.AppendValues(posting, nil)
	pa := pb.NewArray()
	pb.Release()
	defer pa.Release()
	plainMD := arrow.NewMetadata([]string{"lance-encoding:compression"}, []string{"none"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tokens", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "posting_list", Type: arrow.BinaryTypes.Binary, Metadata: plainMD},
	}, nil)
	return writeRecordFile(ctx, st, NGramFile, b.opts, schema, []arrow.Array{ta, pa}, len(tokens))
}

// ---- reading ----

type ngramReader struct {
	rows  map[uint32]int64 // token -> row of its posting list
	data  *lancefile.Reader
	nrows int64
}

func openNGram(ctx context.Context, st Store) (Reader, error) {
	lf, err := openFile(ctx, st, NGramFile)
	if err != nil {
		return nil, err
	}
	rec, err := lf.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{"tokens"}, Limit: -1})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, NGramFile, err)
	}
	defer rec.Release()
	toks, ok := rec.Column(0).(*array.Uint32)
	if !ok {
		return nil, fmt.Errorf("%w: tokens of type %s", ErrCorrupt, rec.Column(0).DataType())
	}
	if len(lf.Schema().FieldIndices("posting_list")) != 1 {
		return nil, fmt.Errorf("%w: no posting_list column", ErrCorrupt)
	}
	r := &ngramReader{rows: make(map[uint32]int64, toks.Len()), data: lf, nrows: int64(toks.Len())}
	for i := range toks.Len() {
		if toks.IsNull(i) {
			continue
		}
		r.rows[toks.Value(i)] = int64(i)
	}
	return r, nil
}

func (r *ngramReader) Type() Type { return NGram }

// list reads the posting list of a token (nil: no row has it).
func (r *ngramReader) list(ctx context.Context, t uint32) (*roaring64.Bitmap, error) {
	row, ok := r.rows[t]
	if !ok {
		return nil, nil
	}
	rec, err := r.data.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{"posting_list"}, Offset: row, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("%w: posting list %d: %v", ErrCorrupt, row, err)
	}
	defer rec.Release()
	var b []byte
	switch a := rec.Column(0).(type) {
	case *array.Binary:
		if a.Len() == 1 {
			b = a.Value(0)
		}
	case *array.LargeBinary:
		if a.Len() == 1 {
			b = a.Value(0)
		}
	default:
		return nil, fmt.Errorf("%w: posting_list of type %s", ErrCorrupt, rec.Column(0).DataType())
	}
	return DecodeTreemap(b)
}

// Search answers Contains with a superset of the rows holding every
// needle (the intersection of the needles' trigram lists), IsNull with
// the null rows exactly. A needle set without a trigram is ErrUnsupported:
// the index knows nothing of it, the caller scans.
func (r *ngramReader) Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error) {
	var tokens []uint32
	switch p.Op {
	case IsNull:
		tokens = []uint32{0}
	case Contains:
		for _, v := range p.Values {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%w: contains() needle of type %T", ErrUnsupported, v)
			}
			tokens = append(tokens, needleTokens(s)...)
		}
		if len(tokens) == 0 {
			return nil, fmt.Errorf("%w: no trigram in the needles %q", ErrUnsupported, p.Values)
		}
	default:
		return nil, fmt.Errorf("%w: predicate op %d on an NGRAM index", ErrUnsupported, p.Op)
	}
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	var out *roaring64.Bitmap
	for _, t := range tokens {
		l, err := r.list(ctx, t)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return roaring64.New(), nil
		}
		if out == nil {
			out = l
		} else {
			out.And(l)
		}
		if out.IsEmpty() {
			break
		}
	}
	return out, nil
}

// DecodeTreemap parses a roaring64 treemap in its portable format (an
// NGRAM posting list), never panicking on hostile bytes: each bucket's
// bitmap is validated before the whole is handed to roaring64.
func DecodeTreemap(b []byte) (*roaring64.Bitmap, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: treemap of %d bytes", ErrCorrupt, len(b))
	}
	n := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	rest := b[8:]
	// every bucket takes at least 4 (key) + 8 (an empty bitmap) bytes
	if n > uint64(len(rest))/12+1 {
		return nil, fmt.Errorf("%w: treemap of %d buckets in %d bytes", ErrCorrupt, n, len(b))
	}
	prev := int64(-1)
	for i := uint64(0); i < n; i++ {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: treemap truncated at bucket %d", ErrCorrupt, i)
		}
		key := int64(uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16 | uint32(rest[3])<<24)
		if key <= prev {
			return nil, fmt.Errorf("%w: treemap buckets out of order", ErrCorrupt)
		}
		prev = key
		rest = rest[4:]
		size, err := roaringSize(rest)
		if err != nil {
			return nil, err
		}
		if _, err := decodeRoaring(rest[:size]); err != nil {
			return nil, err
		}
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the treemap", ErrCorrupt, len(rest))
	}
	out := roaring64.New()
	if err := out.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: treemap: %v", ErrCorrupt, err)
	}
	return out, nil
}

// roaringSize is the length of the portable 32-bit roaring bitmap at the
// start of b.
func roaringSize(b []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("%w: roaring bitmap: %v", ErrCorrupt, r)
		}
	}()
	bm := roaring.New()
	m, err := bm.FromUnsafeBytes(slices.Clone(b))
	if err != nil {
		return 0, fmt.Errorf("%w: roaring bitmap: %v", ErrCorrupt, err)
	}
	if m <= 0 || m > int64(len(b)) {
		return 0, fmt.Errorf("%w: roaring bitmap of %d bytes in %d", ErrCorrupt, m, len(b))
	}
	return int(m), nil
}
