package lancefile

import "bytes"

// Run-length encoding of fixed-width mini-block values, as Lance writes
// it for pages with many repeats (sorted keys, low-cardinality columns,
// dictionary indices of clustered values): per chunk, a buffer of run
// values and a buffer of u8 run lengths, runs longer than 255 split.

// rleWidthOK: Lance run-length encodes 8-, 16-, 32- and 64-bit values.
func rleWidthOK(w int) bool { return w == 1 || w == 2 || w == 4 || w == 8 }

// runsIn counts the runs of equal w-byte values in vals; with split,
// runs longer than 255 count as the entries they are stored as.
func runsIn(vals []byte, w int, split bool) int {
	if len(vals) == 0 {
		return 0
	}
	runs, l := 1, 1
	for i := w; i < len(vals); i += w {
		if !bytes.Equal(vals[i:i+w], vals[i-w:i]) || (split && l == 255) {
			runs, l = runs+1, 1
			continue
		}
		l++
	}
	return runs
}

// rlePays is Lance's rule: a fixed-width page of 8- to 64-bit values
// with fewer runs than half its values.
func (c *column) rlePays() bool {
	p := &c.page
	if c.kind != leafFixed || !rleWidthOK(c.width) || p.n == 0 {
		return false
	}
	return 2*runsIn(p.fixed[:p.n*c.width], c.width, false) < p.n
}

// appendRuns appends the run values of vals to dst and returns it with
// the run lengths (at most 255 each).
func appendRuns(dst, vals []byte, w int) ([]byte, []byte) {
	var lens []byte
	for i := 0; i < len(vals); {
		j := i + w
		for j < len(vals) && j-i < 255*w && bytes.Equal(vals[j:j+w], vals[i:i+w]) {
			j += w
		}
		dst = append(dst, vals[i:i+w]...)
		lens = append(lens, byte((j-i)/w))
		i = j
	}
	return dst, lens
}
