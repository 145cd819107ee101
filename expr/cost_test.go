package expr

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// chainOf is n copies of term joined by sep, then tail.
func chainOf(n int, term, sep, tail string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(term)
	}
	b.WriteString(tail)
	return b.String()
}

// ofSize is term joined by sep until the text is about size bytes.
func ofSize(size int, term, sep, tail string) string {
	return chainOf((size-len(tail))/(len(term)+len(sep)), term, sep, tail)
}

// compileCount parses, binds and counts s over rec, the work of a count_rows: the process's CPU
// time it took (every thread's, the collector's too; unlike the wall time, not stretched by
// other processes on a loaded machine).
func compileCount(t *testing.T, s string) (time.Duration, error) {
	t.Helper()
	rec := testRecord(t)
	defer rec.Release()
	start := cpuTime(t)
	b, err := Compile(s, rec.Schema())
	if err == nil {
		_, err = b.CountTrue(context.Background(), rec)
	}
	return cpuTime(t) - start, err
}

// cpuTime is the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	assert.NilError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestExpressionCost (issue 29): parse, bind and evaluation are linear in the expression's size,
// and one expression's size is bounded — a 1 MB filter is answered or refused quickly, naming the
// limit. Printing and binding a left-deep chain was quadratic: 60,000 `+` terms took 37 s.
func TestExpressionCost(t *testing.T) {
	// CI-safe bounds (-race, a loaded 2-core machine); the real times are logged.
	const bound = time.Second
	t.Run("1 MB filters are refused quickly, naming the limit", func(t *testing.T) {
		for _, c := range []struct{ name, s, want string }{
			{"+ chain", ofSize(1_000_000, "id", " + ", " > 0"), "more than 20000 terms"},
			{"AND chain", ofSize(1_000_000, "id > 0", " AND ", ""), "more than 20000 terms"},
			{"OR chain", ofSize(1_000_000, "id = 1", " OR ", ""), "more than 20000 terms"},
			{"over MaxBytes", ofSize(MaxBytes+10, "id", " + ", " > 0"), fmt.Sprintf("more than the %d allowed", MaxBytes)},
		} {
			start := time.Now()
			d, err := compileCount(t, c.s)
			t.Logf("%s (%d bytes): %v CPU, %v wall", c.name, len(c.s), d, time.Since(start))
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
			assert.ErrorContains(t, err, c.want)
			assert.Assert(t, d < bound, "%s took %v", c.name, d)
		}
	})
	t.Run("time is linear in the terms", func(t *testing.T) {
		for _, c := range []struct {
			name            string
			term, sep, tail string
			per             int // terms per repetition
		}{
			{"+", "id", " + ", " > 0", 2},
			{"AND", "id > 0", " AND ", "", 4},
		} {
			// The bytes allocated are the deterministic measure (a quadratic print or copy
			// shows there first); the time is the best of five runs, as the machine may pause
			// any one of them.
			measure := func(n int) (time.Duration, uint64) {
				s := chainOf(n, c.term, c.sep, c.tail)
				var best time.Duration
				var bytes uint64
				for range 5 {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					d, err := compileCount(t, s)
					runtime.ReadMemStats(&after)
					assert.NilError(t, err)
					if best == 0 || d < best {
						best, bytes = d, after.TotalAlloc-before.TotalAlloc
					}
				}
				return best, bytes
			}
			n := MaxTerms / c.per / 5
			small, smallB := measure(n)
			large, largeB := measure(4 * n)
			t.Logf("%s chain: %d repetitions %v (%d KiB), %d repetitions %v (%d KiB): %.1fx the time, %.1fx the bytes",
				c.name, n, small, smallB>>10, 4*n, large, largeB>>10, float64(large)/float64(small), float64(largeB)/float64(smallB))
			assert.Assert(t, largeB < 5*smallB, "%s: 4x the terms allocated %d bytes, 1x %d", c.name, largeB, smallB)
			// quadratic would be 16x; a loaded CI machine stretches one run more than another
			assert.Assert(t, large < 12*small+20*time.Millisecond, "%s: 4x the terms took %v, 1x %v", c.name, large, small)
			assert.Assert(t, large < bound)
		}
	})
	t.Run("long IN lists stay cheap", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("i IN (")
		for i := range 100_000 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, i)
		}
		b.WriteString(")")
		d, err := compileCount(t, b.String())
		t.Logf("IN list of 100,000 values (%d bytes): %v", b.Len(), d)
		assert.NilError(t, err)
		assert.Assert(t, d < 2*bound)
		// values the binder cannot make a set (a float column) are terms
		_, err = compileCount(t, strings.Replace(b.String(), "i IN", "f IN", 1))
		assert.ErrorContains(t, err, "counts each value as a term")
	})
	t.Run("nesting stays refused quickly", func(t *testing.T) {
		for _, c := range []struct{ name, s string }{
			{"100k parentheses", strings.Repeat("(", 100_000) + "id" + strings.Repeat(")", 100_000) + " > 0"},
			{"100k NOT", strings.Repeat("NOT ", 100_000) + "b"},
			{"10k nested CASE", strings.Repeat("CASE WHEN b THEN ", 10_000) + "1" + strings.Repeat(" END", 10_000) + " > 0"},
			{"100k unary minus", strings.Repeat("- ", 100_000) + "id > 0"},
		} {
			d, err := compileCount(t, c.s)
			t.Logf("%s: %v", c.name, d)
			assert.ErrorContains(t, err, fmt.Sprintf("nested more than %d levels deep", MaxDepth))
			assert.Assert(t, d < bound)
		}
	})
	t.Run("a projection list shares the bound", func(t *testing.T) {
		_, err := ParseSelect(chainOf(7000, "id + 1", ", ", ""))
		assert.ErrorContains(t, err, "more than 20000 terms")
		items, err := ParseSelect(chainOf(1000, "id + 1", ", ", ""))
		assert.NilError(t, err)
		assert.Equal(t, len(items), 1000)
	})
}

// BenchmarkCompileChain is parse + bind + count of `id + id + … > 0` over the test record.
func BenchmarkCompileChain(b *testing.B) {
	benchCompileCount(b, []int{1000, 4000, 9000}, func(n int) string { return chainOf(n, "id", " + ", " > 0") })
}

// BenchmarkCompileAndChain is parse + bind + count of `id > 0 AND id > 0 AND …` over the test record.
func BenchmarkCompileAndChain(b *testing.B) {
	benchCompileCount(b, []int{500, 1000, 2000, 4000}, func(n int) string { return chainOf(n, "id > 0", " AND ", "") })
}

// benchCompileCount measures parse + bind + count over the test record of the filter
// filterOf(n) gives, for each n of sizes.
func benchCompileCount(b *testing.B, sizes []int, filterOf func(n int) string) {
	rec := testRecord(b)
	defer rec.Release()
	for _, n := range sizes {
		s := filterOf(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				bd, err := Compile(s, rec.Schema())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bd.CountTrue(context.Background(), rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
