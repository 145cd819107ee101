package lancefile

import (
	"math/rand/v2"
	"testing"

	"gotest.tools/v3/assert"
)

// unpackRef is the plain per-value form of unpackFastLanes (the code before
// the per-width loops): the specification the fast form must match.
func unpackRef(dst, src []byte, t, w int) {
	lanes := fastLanesBlock / t
	word := func(pos int) uint64 { return getUint(src, pos, t) }
	mask := uint64(1)<<w - 1
	if w == 64 {
		mask = ^uint64(0)
	}
	for lane := 0; lane < lanes; lane++ {
		for row := 0; row < t; row++ {
			bit := row * w
			k, shift := bit/t, bit%t
			v := word(lanes*k+lane) >> shift
			if shift+w > t {
				v |= word(lanes*(k+1)+lane) << (t - shift)
			}
			putUint(dst, fastLanesOrder[row/8]*16+(row%8)*128+lane, t, v&mask)
		}
	}
}

// TestUnpackFastLanesMatchesReference: every value width, every packed
// width, aligned and unaligned source and destination (a view of an
// unaligned destination must not lose the writes).
func TestUnpackFastLanesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, bits := range []int{8, 16, 32, 64} {
		for w := 0; w <= bits; w++ {
			for _, skew := range []int{0, 1, 3} {
				src := make([]byte, 128*w+skew)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				want := make([]byte, fastLanesBlock*bits/8)
				if w > 0 {
					unpackRef(want, src[skew:], bits, w)
				}
				got := make([]byte, fastLanesBlock*bits/8+skew)
				assert.NilError(t, unpackFastLanes(got[skew:], src[skew:], bits, w))
				assert.DeepEqual(t, got[skew:], want)
			}
		}
	}
}

func BenchmarkUnpackFastLanes64(b *testing.B) {
	src := make([]byte, 128*18)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, fastLanesBlock*8)
	b.SetBytes(int64(len(dst)))
	for b.Loop() {
		_ = unpackFastLanes(dst, src, 64, 18)
	}
}
