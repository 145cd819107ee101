package arrowipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"gotest.tools/v3/assert"
)

// footerOf finds a file's footer: where it starts, and its record batch block entries (the
// position of each 24-byte entry in the file).
func footerOf(t testing.TB, f []byte) (end int, footer fbTable, entries []int) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(f[len(f)-10:]))
	end = len(f) - 10 - n
	b := fbuf(f[end : len(f)-10])
	root, err := b.u32(0)
	assert.NilError(t, err)
	footer, err = b.table(int(root))
	assert.NilError(t, err)
	start, count, err := footer.vector(3, 24)
	assert.NilError(t, err)
	for i := range count {
		entries = append(entries, end+start+24*i)
	}
	return end, footer, entries
}

// noSchemaFile is f rewritten as Arrow JS writes files: no schema message after the magic (the
// schema only in the footer), the blocks' offsets moved accordingly.
func noSchemaFile(t testing.TB, f []byte) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(f[12:])) // the schema message: 0xFFFFFFFF, length, metadata
	cut := 8 + n
	out := append(bytes.Clone(f[:8]), f[8+cut:]...)
	_, _, entries := footerOf(t, out)
	for _, p := range entries {
		binary.LittleEndian.PutUint64(out[p:], binary.LittleEndian.Uint64(out[p:])-uint64(cut))
	}
	return out
}

// A file is read by its footer: one whose stream has no schema message (Arrow JS) reads, in the
// footer's order, compressed or not.
func TestFileReaderByFooter(t *testing.T) {
	for _, opts := range [][]ipc.Option{nil, {ipc.WithLZ4()}, {ipc.WithZstd()}} {
		f := batches(t, 3, 7, true, opts...)
		rows, err := readFile(f)
		assert.NilError(t, err)
		assert.Equal(t, rows, int64(21))

		js := noSchemaFile(t, f)
		rows, err = readFile(js)
		assert.NilError(t, err, "a file with its schema only in the footer")
		assert.Equal(t, rows, int64(21))
		// As a stream (a pipe), such a file says why it cannot be read.
		_, err = readStreaming(js[8:], StreamOptions{})
		assert.Assert(t, errors.Is(err, ErrNoSchema), "%v", err)
	}
}

// A forged footer or block is refused with ErrInvalid before arrow-go allocates what it claims,
// and reading it costs a few MiB at most (a block past the footer or of 1 TiB, an index of 2^30
// blocks, blocks adding up to more than the file, a schema of 2^30 fields, a footer claiming
// more than a footer may be); so is every forged batch of TestStreamReaderForged, in a file.
func TestFileReaderForged(t *testing.T) {
	cases := []struct {
		name  string
		forge func(f []byte, end int, footer fbTable, entries []int)
	}{
		{"a block past the footer", func(f []byte, _ int, _ fbTable, e []int) { put64(f, e[0], 1<<40) }},
		{"a negative block offset", func(f []byte, _ int, _ fbTable, e []int) { put64(f, e[0], -8) }},
		{"a block body of 1 TiB", func(f []byte, _ int, _ fbTable, e []int) { put64(f, e[0]+16, 1<<40) }},
		{"a block body off by 8", func(f []byte, _ int, _ fbTable, e []int) {
			put64(f, e[0]+16, int64(binary.LittleEndian.Uint64(f[e[0]+16:]))+8)
		}},
		{"block metadata of 1 GiB", func(f []byte, _ int, _ fbTable, e []int) {
			binary.LittleEndian.PutUint32(f[e[0]+8:], 1<<30)
		}},
		{"an index of 2^30 blocks", func(f []byte, end int, footer fbTable, _ []int) {
			start, _, _ := footer.vector(3, 24)
			binary.LittleEndian.PutUint32(f[end+start-4:], 1<<30)
		}},
		{"blocks adding up to more than the file", func(f []byte, end int, _ fbTable, e []int) {
			for _, p := range e {
				off, meta := int64(binary.LittleEndian.Uint64(f[e[0]:])), int64(binary.LittleEndian.Uint32(f[e[0]+8:]))
				put64(f, p, off)
				binary.LittleEndian.PutUint32(f[p+8:], uint32(meta))
				put64(f, p+16, (int64(end)-off-meta)&^7)
			}
		}},
		{"a schema of 2^30 fields", func(f []byte, end int, footer fbTable, _ []int) {
			schema, _, err := footer.sub(1)
			assert.NilError(t, err)
			start, _, err := schema.vector(1, 4)
			assert.NilError(t, err)
			binary.LittleEndian.PutUint32(f[end+start-4:], 1<<30)
		}},
		{"a footer of 2 GiB", func(f []byte, _ int, _ fbTable, _ []int) {
			binary.LittleEndian.PutUint32(f[len(f)-10:], 1<<31)
		}},
		{"a footer of 64 MiB + 8", func(f []byte, _ int, _ fbTable, _ []int) {
			binary.LittleEndian.PutUint32(f[len(f)-10:], maxFooter+8)
		}},
	}
	vec := func(batch fbTable, slot int) int {
		start, _, err := batch.vector(slot, 16)
		assert.NilError(t, err)
		return start
	}
	for _, tc := range []struct {
		name  string
		forge func(meta fbuf, msg, batch fbTable)
	}{
		{"batch: a 1 TiB body", func(meta fbuf, msg, _ fbTable) { put64(meta, msg.pos+msg.offset(3), 1<<40) }},
		{"batch: a buffer past the body", func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 2)+8, 1<<40) }},
		{"batch: an overflowing buffer", func(meta fbuf, _, batch fbTable) {
			put64(meta, vec(batch, 2)+16, math.MaxInt64-4)
			put64(meta, vec(batch, 2)+24, 16)
		}},
		{"batch: a node of 2^50 values", func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 1), 1<<50) }},
		{"batch: 2^40 rows", func(meta fbuf, _, batch fbTable) { put64(meta, batch.pos+batch.offset(0), 1<<40) }},
	} {
		cases = append(cases, struct {
			name  string
			forge func(f []byte, end int, footer fbTable, entries []int)
		}{tc.name, func(f []byte, _ int, _ fbTable, _ []int) {
			meta, msg, batch, _ := firstBatch(t, f[8:])
			tc.forge(meta, msg, batch)
		}})
	}
	cases = append(cases, struct {
		name  string
		forge func(f []byte, end int, footer fbTable, entries []int)
	}{"batch: a compressed buffer of 1 TiB", nil})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f []byte
			if tc.forge == nil {
				f = batches(t, 2, 10, true, ipc.WithLZ4())
				meta, _, batch, body := firstBatch(t, f[8:])
				off := binary.LittleEndian.Uint64(meta[vec(batch, 2)+16:]) // buffer 1: the values of id
				put64(fbuf(f), 8+body+int(off), 1<<40)
			} else {
				f = batches(t, 2, 10, true)
				end, footer, entries := footerOf(t, f)
				tc.forge(f, end, footer, entries)
			}
			for name, body := range map[string][]byte{"file": f, "schema only in the footer": nil} {
				if body == nil {
					if tc.forge == nil || tc.name[:6] == "batch:" {
						continue
					}
					g := noSchemaFile(t, batches(t, 2, 10, true))
					end, footer, entries := footerOf(t, g)
					tc.forge(g, end, footer, entries)
					body = g
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := readFile(body)
				runtime.ReadMemStats(&after)
				assert.Assert(t, errors.Is(err, ErrInvalid), "%s: %v", name, err)
				t.Logf("%s: %v", name, err)
				assert.Assert(t, after.TotalAlloc-before.TotalAlloc < 16<<20, "%s: allocated %d bytes", name, after.TotalAlloc-before.TotalAlloc)
			}
		})
	}
}
