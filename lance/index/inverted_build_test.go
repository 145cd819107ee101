package index

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// ftsBuildCorpus is lance's ftsCorpus (TestFTSTimeVsSDK's table: Zipf
// words of a small vocabulary with punctuation, capitals, overlong tokens,
// nulls, empty and stop-word-only values) as string batches of batch rows
// and their row ids, the shape a scan hands the builder.
func ftsBuildCorpus(n, batch int, seed uint64) ([]arrow.Array, [][]uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	vocab := ftsVocab
	z := rand.NewZipf(r, 1.3, 2, uint64(len(vocab)-1))
	var arrs []arrow.Array
	var ids [][]uint64
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	var bid []uint64
	for i := range n {
		switch i % 97 {
		case 13:
			sb.AppendNull()
		case 29:
			sb.Append("")
		case 31:
			sb.Append("the and of")
		default:
			var b strings.Builder
			for w := range 3 + r.IntN(25) {
				if w > 0 {
					b.WriteString([]string{" ", " ", " ", ", ", ". ", "-", "!  "}[r.IntN(7)])
				}
				word := vocab[z.Uint64()]
				if r.IntN(10) == 0 && word[0] < 0x80 {
					word = strings.ToUpper(word[:1]) + word[1:]
				}
				if r.IntN(200) == 0 {
					word = strings.Repeat("long", 10+r.IntN(3))
				}
				b.WriteString(word)
			}
			sb.Append(b.String())
		}
		bid = append(bid, uint64(i))
		if len(bid) == batch || i == n-1 {
			arrs = append(arrs, sb.NewArray())
			ids = append(ids, bid)
			bid = nil
		}
	}
	return arrs, ids
}

func buildFTSBatches(tb testing.TB, arrs []arrow.Array, ids [][]uint64, withPos bool) memStore {
	st := memStore{}
	buildFTSInto(tb, st, arrs, ids, withPos)
	return st
}

func buildFTSInto(tb testing.TB, st Store, arrs []arrow.Array, ids [][]uint64, withPos bool) {
	p := DefaultTokenizerParams()
	p.WithPosition = withPos
	b, err := NewFTSBuilder(p, BuildOptions{})
	assert.NilError(tb, err)
	for i := range arrs {
		assert.NilError(tb, b.Add(arrs[i], ids[i]))
	}
	_, err = b.Finish(context.Background(), st)
	assert.NilError(tb, err)
}

// discardStore reads and drops what is put (what a build costs without
// the test store's copy of the files).
type discardStore struct{ memStore }

func (discardStore) Put(_ context.Context, _ string, r io.Reader, _ int64) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

// BenchmarkFTSBuild: the INVERTED build (tokenize, postings, positions,
// the three Lance files) over TestFTSTimeVsSDK's 200,000 documents in
// scan-sized batches. go test -run '^$' -bench FTSBuild -benchmem ./lance/index
func BenchmarkFTSBuild(b *testing.B) {
	arrs, ids := ftsBuildCorpus(200000, 8192, 3)
	for _, withPos := range []bool{true, false} {
		b.Run(fmt.Sprint("positions=", withPos), func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				buildFTSInto(b, discardStore{}, arrs, ids, withPos)
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// ftsDigest is a digest of every file of an index directory.
func ftsDigest(st memStore) string {
	names := make([]string, 0, len(st))
	for n := range st {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(st[n]))
		h.Write(st[n])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestFTSBuildDeterministic: the index files do not depend on how the
// rows were batched or how many goroutines tokenized and encoded them
// (the builder splits batches across GOMAXPROCS workers, each with its
// own vocabulary, and encodes token ranges in parallel); and a batch the
// caller releases right after Add (as a scan does on Next) is still read
// correctly and freed exactly once (checked allocator).
func TestFTSBuildDeterministic(t *testing.T) {
	arrs, ids := ftsBuildCorpus(2000, 2000, 11)
	whole, allIDs := arrs[0].(*array.String), ids[0]
	defer whole.Release()
	for _, withPos := range []bool{true, false} {
		want := ftsDigest(buildFTSBatches(t, arrs, ids, withPos))
		for _, procs := range []int{1, 3} {
			for _, size := range []int{50, 600} {
				prev := runtime.GOMAXPROCS(procs)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				p := DefaultTokenizerParams()
				p.WithPosition = withPos
				b, err := NewFTSBuilder(p, BuildOptions{})
				assert.NilError(t, err)
				for lo := 0; lo < whole.Len(); lo += size {
					hi := min(lo+size, whole.Len())
					sb := array.NewStringBuilder(mem)
					for i := lo; i < hi; i++ {
						if whole.IsNull(i) {
							sb.AppendNull()
						} else {
							sb.Append(whole.Value(i))
						}
					}
					batch := sb.NewArray()
					sb.Release()
					batchIDs := slices.Clone(allIDs[lo:hi])
					assert.NilError(t, b.Add(batch, batchIDs))
					batch.Release()
					clear(batchIDs) // the caller's ids are not read after Add
				}
				st := memStore{}
				_, err = b.Finish(context.Background(), st)
				assert.NilError(t, err)
				runtime.GOMAXPROCS(prev)
				mem.AssertSize(t, 0)
				assert.Equal(t, ftsDigest(st), want, "positions %v, GOMAXPROCS %d, batches of %d", withPos, procs, size)
			}
		}
	}
}
