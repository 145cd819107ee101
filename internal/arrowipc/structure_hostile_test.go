package arrowipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"gotest.tools/v3/assert"
)

// A forged is a batch message (record or dictionary batch) as fields, re-encoded by the
// flatbuffers builder after a test changed them: what a hostile writer can put in the metadata.
type forged struct {
	kind     byte // 2 dictionary batch, 3 record batch
	version  int16
	rows     int64
	dictID   int64
	nodes    [][2]int64
	buffers  [][2]int64
	variadic []int64
	codec    int // -1: uncompressed
	body     []byte
}

// rawMessage is one framed message of a stream.
type rawMessage struct {
	lay   layout
	codec int
	raw   []byte // prefix, metadata, body
	body  []byte
}

// splitStream is the messages of a stream arrow-go wrote (up to its end marker).
func splitStream(t testing.TB, s []byte) []rawMessage {
	t.Helper()
	var out []rawMessage
	for pos := 0; pos < len(s); {
		n := int(binary.LittleEndian.Uint32(s[pos+4:]))
		if n == 0 {
			break
		}
		meta := fbuf(s[pos+8 : pos+8+n])
		lay, err := checkLayout(meta, int64(len(s)))
		assert.NilError(t, err)
		codec := -1
		if lay.compressed {
			root, _ := meta.u32(0)
			msg, _ := meta.table(int(root))
			header, _, _ := msg.sub(2)
			batch := header
			if lay.kind == 2 {
				batch, _, _ = header.sub(1)
			}
			comp, _, _ := batch.sub(3)
			c, _ := comp.scalar(0, 1)
			codec = 0
			if c != nil {
				codec = int(c[0])
			}
		}
		end := pos + 8 + n + int(lay.bodyLen)
		out = append(out, rawMessage{lay: lay, codec: codec, raw: s[pos:end], body: s[pos+8+n : end]})
		pos = end
	}
	return out
}

func (m rawMessage) forged() *forged {
	return &forged{
		kind: m.lay.kind, version: m.lay.version, rows: m.lay.rows, dictID: m.lay.dictID,
		nodes: append([][2]int64(nil), m.lay.nodes...), buffers: append([][2]int64(nil), m.lay.buffers...),
		variadic: append([]int64(nil), m.lay.variadic...), codec: m.codec, body: bytes.Clone(m.body),
	}
}

// encode is the framed message: continuation, metadata length, metadata padded to 8, body.
func (f *forged) encode() []byte {
	b := flatbuffers.NewBuilder(256)
	structs := func(v [][2]int64) flatbuffers.UOffsetT {
		b.StartVector(16, len(v), 8)
		for i := len(v) - 1; i >= 0; i-- {
			b.Prep(8, 16)
			b.PrependInt64(v[i][1])
			b.PrependInt64(v[i][0])
		}
		return b.EndVector(len(v))
	}
	nodes := structs(f.nodes)
	buffers := structs(f.buffers)
	var variadic flatbuffers.UOffsetT
	if f.variadic != nil {
		b.StartVector(8, len(f.variadic), 8)
		for i := len(f.variadic) - 1; i >= 0; i-- {
			b.PrependInt64(f.variadic[i])
		}
		variadic = b.EndVector(len(f.variadic))
	}
	var comp flatbuffers.UOffsetT
	if f.codec >= 0 {
		b.StartObject(2)
		b.PrependByteSlot(0, byte(f.codec), 0)
		comp = b.EndObject()
	}
	b.StartObject(5)
	b.PrependInt64Slot(0, f.rows, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	if comp != 0 {
		b.PrependUOffsetTSlot(3, comp, 0)
	}
	if variadic != 0 {
		b.PrependUOffsetTSlot(4, variadic, 0)
	}
	header := b.EndObject()
	if f.kind == 2 {
		b.StartObject(3)
		b.PrependInt64Slot(0, f.dictID, 0)
		b.PrependUOffsetTSlot(1, header, 0)
		header = b.EndObject()
	}
	b.StartObject(5)
	b.PrependInt16Slot(0, f.version, 0)
	b.PrependByteSlot(1, f.kind, 0)
	b.PrependUOffsetTSlot(2, header, 0)
	b.PrependInt64Slot(3, int64(len(f.body)), 0)
	b.Finish(b.EndObject())
	meta := b.FinishedBytes()
	n := (len(meta) + 7) &^ 7
	out := binary.LittleEndian.AppendUint32(nil, 0xFFFFFFFF)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	out = append(out, meta...)
	out = append(out, make([]byte, n-len(meta))...)
	return append(out, f.body...)
}

// withMessage is file f with msg added before its footer and block i of the footer's slot (2:
// dictionaries, 3: record batches) pointing at it.
func withMessage(t testing.TB, f []byte, msg []byte, slot, i int) []byte {
	t.Helper()
	end, _, _ := footerOf(t, f)
	out := append(append(bytes.Clone(f[:end]), msg...), f[end:]...)
	end += len(msg)
	b := fbuf(out[end : len(out)-10])
	root, _ := b.u32(0)
	footer, err := b.table(int(root))
	assert.NilError(t, err)
	start, n, err := footer.vector(slot, 24)
	assert.NilError(t, err)
	assert.Assert(t, i < n)
	p := end + start + 24*i
	meta := 8 + int(binary.LittleEndian.Uint32(msg[4:]))
	put64(out, p, int64(end-len(msg)))
	binary.LittleEndian.PutUint32(out[p+8:], uint32(meta))
	put64(out, p+16, int64(len(msg)-meta))
	return out
}

func cols(names ...string) []column {
	var out []column
	for _, n := range names {
		for _, c := range broadColumns {
			if c.name == n {
				out = append(out, c)
			}
		}
	}
	return out
}

// Hostile batches, built by re-encoding the metadata of a batch arrow-go wrote with one thing
// wrong, are refused by every reader (Verify and ReadStream, the stream reader from a pipe and
// from memory, the batch reader of request bodies, the file reader) with an error saying what is
// wrong, before arrow-go loads them, and without allocating more than a few MiB.
func TestStructureRefusesHostile(t *testing.T) {
	i64 := []column{{"v", arrow.PrimitiveTypes.Int64, `[1, null, 3, 4, 5]`}}
	i64nn := []column{{"v", arrow.PrimitiveTypes.Int64, `[1, 2, 3, 4, 5]`}}
	str := []column{{"s", arrow.BinaryTypes.String, `["a", "b", "c", "d", "e"]`}}
	lstr := []column{{"s", arrow.BinaryTypes.LargeString, `["a", "b", "c", "d", "e"]`}}
	type tc struct {
		name  string
		cols  []column
		dict  bool // a dictionary column too
		lz4   bool
		pick  byte // the message forged: 3 the first record batch (default), 2 the first dictionary batch
		forge func(f *forged)
		want  string
		layer bool // refused by checkLayout (before the structure)
	}
	cases := []tc{
		{name: "int64 with too few buffers", cols: i64, forge: func(f *forged) { f.buffers = f.buffers[:1] },
			want: `record batch lists 1 buffers, too few for field "v" (int64): its schema's fields take 2`},
		{name: "int64 with too many buffers", cols: i64, forge: func(f *forged) { f.buffers = append(f.buffers, [2]int64{0, 0}) },
			want: `record batch lists 3 buffers; its schema's fields take 2`},
		{name: "no buffers at all", cols: cols("i32", "str"), forge: func(f *forged) { f.buffers = nil },
			want: `record batch lists 0 buffers, too few for field "i32" (int32): its schema's fields take 5`},
		{name: "struct with too few nodes", cols: cols("struct"), forge: func(f *forged) { f.nodes = f.nodes[:len(f.nodes)-1] },
			want: `record batch lists 4 field nodes, too few for field "struct.c.item" (bool): its schema's fields take 5`},
		{name: "too many nodes", cols: i64, forge: func(f *forged) { f.nodes = append(f.nodes, [2]int64{0, 0}) },
			want: `record batch lists 2 field nodes; its schema's fields take 1`},
		{name: "no nodes", cols: i64, forge: func(f *forged) { f.nodes = nil },
			want: `record batch lists 0 field nodes, too few for field "v" (int64): its schema's fields take 1`},
		{name: "a buffer beyond the body", cols: i64, layer: true, forge: func(f *forged) { f.buffers[1][1] = int64(len(f.body)) + 64 },
			want: `is outside the body`},
		{name: "a negative buffer length", cols: i64, layer: true, forge: func(f *forged) { f.buffers[1][1] = -8 },
			want: `is outside the body`},
		{name: "a negative node length", cols: i64, layer: true, forge: func(f *forged) { f.nodes[0][0] = -1 },
			want: `array node 0: length -1`},
		{name: "a negative null count", cols: i64, layer: true, forge: func(f *forged) { f.nodes[0][1] = -1 },
			want: `array node 0: length 5, -1 nulls`},
		{name: "more nulls than values", cols: i64, layer: true, forge: func(f *forged) { f.nodes[0][1] = 6 },
			want: `array node 0: length 5, 6 nulls`},
		{name: "nulls without a validity bitmap", cols: i64, forge: func(f *forged) { f.buffers[0][1] = 0 },
			want: `field "v" (int64): a validity bitmap of 0 bytes for 5 values with 1 nulls; it needs 1`},
		{name: "a validity bitmap too short", cols: i64, forge: func(f *forged) {
			f.rows, f.nodes[0][0] = 1000, 1000
			f.buffers[1][1] = int64(len(f.body)) - f.buffers[1][0]
		}, want: `field "v" (int64): a validity bitmap of 4 bytes for 1000 values with 1 nulls; it needs 125`},
		{name: "values too short", cols: i64nn, forge: func(f *forged) { f.buffers[1][1] = 8 },
			want: `field "v" (int64): its values (8 bytes) are too short for 5 values of 8 bytes`},
		{name: "rows beyond the values", cols: i64nn, forge: func(f *forged) { f.rows, f.nodes[0][0] = 1<<20, 1<<20 },
			want: `field "v" (int64): its values (40 bytes) are too short for 1048576 values of 8 bytes`},
		{name: "a column shorter than the batch", cols: i64nn, forge: func(f *forged) { f.rows = 6 },
			want: `record batch of 6 rows: column "v" (int64, field node 0) has 5 values`},
		{name: "a buffer not 8-byte aligned", cols: i64nn, forge: func(f *forged) { f.buffers[1][0] += 4; f.buffers[1][1] -= 4 },
			want: `buffer 1 (field "v"'s values) starts at offset 4 of the body, not 8-byte aligned`},
		{name: "utf8 offsets too short", cols: str, forge: func(f *forged) { f.rows, f.nodes[0][0] = 100, 100 },
			want: `field "s" (utf8): its offsets (24 bytes) are too short for 101 values of 4 bytes`},
		{name: "large utf8 offsets too short", cols: lstr, forge: func(f *forged) { f.rows, f.nodes[0][0] = 10, 10 },
			want: `field "s" (large_utf8): its offsets (48 bytes) are too short for 11 values of 8 bytes`},
		{name: "binary without its data buffer", cols: cols("bin"), forge: func(f *forged) { f.buffers = f.buffers[:2] },
			want: `record batch lists 2 buffers, too few for field "bin" (binary): its schema's fields take 3`},
		{name: "a view without its variadic count", cols: cols("strview"), forge: func(f *forged) { f.variadic = nil },
			want: `record batch lists 0 variadic buffer counts, too few for field "strview" (utf8_view): its schema has 1 view fields`},
		{name: "a variadic count beyond the buffers", cols: cols("strview"), forge: func(f *forged) { f.variadic[0] = 2 },
			want: `record batch lists 3 buffers, too few for field "strview" (utf8_view): its schema's fields take 4`},
		{name: "a variadic count short of the buffers", cols: cols("strview"), forge: func(f *forged) { f.variadic[0] = 0 },
			want: `record batch lists 3 buffers; its schema's fields take 2`},
		{name: "variadic counts for no view", cols: cols("strview"), forge: func(f *forged) { f.variadic = append(f.variadic, 0) },
			want: `record batch lists 2 variadic buffer counts; its schema has 1 view fields`},
		{name: "views too short", cols: cols("strview"), forge: func(f *forged) { f.buffers[1][1] = 64; f.rows, f.nodes[0][0] = 5, 5 },
			want: `field "strview" (utf8_view): its views (64 bytes) are too short for 5 values of 16 bytes`},
		{name: "fixed-size binary too short", cols: cols("fsb"), forge: func(f *forged) { f.buffers[1][1] = 8 },
			want: `field "fsb" (fixed_size_binary[3]): its values (8 bytes) are too short for 5 values of 3 bytes`},
		{name: "list offsets too short", cols: []column{{"list", arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], [2, 3], [], [4], [5]]`}},
			forge: func(f *forged) { f.rows, f.nodes[0][0] = 100, 100 },
			want:  `field "list" (list): its offsets (24 bytes) are too short for 101 values of 4 bytes`},
		{name: "list without its values", cols: cols("list"), forge: func(f *forged) { f.nodes = f.nodes[:1]; f.buffers = f.buffers[:2] },
			want: `record batch lists 1 field nodes, too few for field "list.item" (int32): its schema's fields take 2`},
		{name: "list view sizes too short", cols: cols("listview"), forge: func(f *forged) { f.buffers[2][1] = 8 },
			want: `field "listview" (list_view): its sizes (8 bytes) are too short for 5 values of 4 bytes`},
		{name: "fixed-size list values too few", cols: cols("fsl"), forge: func(f *forged) { f.nodes[1][0] = 3 },
			want: `field "fsl" (fixed_size_list[2]): 5 values of 2 need 10 child values; the child has 3`},
		{name: "struct child shorter than the struct", cols: cols("struct"), forge: func(f *forged) { f.nodes[1][0] = 2 },
			want: `field "struct" (struct) of 5 values: child "struct.a" has 2`},
		{name: "sparse union type ids too short", cols: cols("sparse"), forge: func(f *forged) { f.buffers[0][1] = 2 },
			want: `field "sparse" (sparse_union): its type ids (2 bytes) are too short for 5 values of 1 bytes`},
		{name: "sparse union child shorter than the union", cols: cols("sparse"), forge: func(f *forged) { f.nodes[1][0] = 4 },
			want: `field "sparse" (sparse_union) of 5 values: child "sparse.i" has 4`},
		{name: "dense union offsets too short", cols: cols("dense"), forge: func(f *forged) { f.buffers[1][1] = 8 },
			want: `field "dense" (dense_union): its offsets (8 bytes) are too short for 5 values of 4 bytes`},
		{name: "a union with nulls before V5", cols: cols("sparse"), forge: func(f *forged) {
			f.version, f.nodes[0][1] = 3, 1
			f.buffers = append([][2]int64{{0, 0}}, f.buffers...) // the validity buffer V4 has
		},
			want: `field "sparse" (sparse_union): 1 nulls in a union before metadata V5`},
		{name: "a union before V5 without its validity buffer", cols: cols("dense"), forge: func(f *forged) { f.version = 3 },
			want: `record batch lists 7 buffers, too few for field "dense.s" (utf8): its schema's fields take 8`},
		{name: "run-end encoded before V5 without its validity buffer", cols: cols("ree"), forge: func(f *forged) { f.version = 3 },
			want: `record batch lists 5 buffers, too few for field "ree.values" (utf8): its schema's fields take 6`},
		{name: "run-end encoded without its values", cols: cols("ree"), forge: func(f *forged) { f.nodes = f.nodes[:2] },
			want: `record batch lists 2 field nodes, too few for field "ree.values" (utf8): its schema's fields take 3`},
		{name: "dictionary indices too short", cols: i64nn, dict: true, forge: func(f *forged) { f.buffers[3][1] = 2 },
			want: `field "dict" (dictionary<int8>): its indices (2 bytes) are too short for 5 values of 1 bytes`},
		{name: "a dictionary batch with too few buffers", cols: i64nn, dict: true, pick: 2, forge: func(f *forged) { f.buffers = f.buffers[:2] },
			want: `dictionary batch 0 (field "dict") lists 2 buffers, too few for field "dict" (utf8): its schema's fields take 3`},
		{name: "a dictionary batch with too many nodes", cols: i64nn, dict: true, pick: 2, forge: func(f *forged) { f.nodes = append(f.nodes, f.nodes[0]) },
			want: `dictionary batch 0 (field "dict") lists 2 field nodes; its schema's fields take 1`},
		{name: "a dictionary batch for no field", cols: i64nn, dict: true, pick: 2, forge: func(f *forged) { f.dictID = 7 },
			want: `a dictionary batch for id 7, which no field of the schema has`},
		{name: "compressed, too few buffers (the fuzzed 212 TB batch's shape)", cols: i64nn, lz4: true, forge: func(f *forged) { f.buffers = f.buffers[:1] },
			want: `record batch lists 1 buffers, too few for field "v" (int64): its schema's fields take 2`},
		{name: "compressed, decoding to too few values", cols: i64nn, lz4: true, forge: func(f *forged) {
			put64(f.body, int(f.buffers[1][0]), 16)
		}, want: `field "v" (int64): its values (16 bytes) are too short for 5 values of 8 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := record(t, c.cols, c.dict)
			defer rec.Release()
			var opts []ipc.Option
			if c.lz4 {
				opts = append(opts, ipc.WithLZ4())
			}
			s := write(t, []arrow.RecordBatch{rec}, false, opts...)
			msgs := splitStream(t, s)
			pick := c.pick
			if pick == 0 {
				pick = 3
			}
			at := -1
			for i, m := range msgs {
				if m.lay.kind == pick {
					at = i
					break
				}
			}
			assert.Assert(t, at >= 0)
			with := func(msg []byte) []byte {
				var out []byte
				for i, m := range msgs {
					if i == at {
						out = append(out, msg...)
					} else {
						out = append(out, m.raw...)
					}
				}
				return append(out, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0)
			}
			f := msgs[at].forged()
			good := with(f.encode())
			assert.NilError(t, Verify(good), "re-encoded as it was")
			_, err := readStreaming(good, StreamOptions{})
			assert.NilError(t, err, "re-encoded as it was")
			c.forge(f)
			msg := f.encode()
			bad := with(msg)
			slot, block := 3, 0
			if pick == 2 {
				slot = 2
			}
			file := withMessage(t, write(t, []arrow.RecordBatch{rec}, true, opts...), msg, slot, block)

			paths := []struct {
				name string
				read func() error
			}{
				{"Verify", func() error { return Verify(bad) }},
				{"ReadStream", func() error {
					_, recs, err := ReadStream(bad)
					for _, r := range recs {
						r.Release()
					}
					return err
				}},
				{"NewStreamReader", func() error { _, err := readStreaming(bad, StreamOptions{}); return err }},
				{"NewBytesReader", func() error { _, err := drain(NewBytesReader(bad, StreamOptions{})); return err }},
				{"NewBatchReader", func() error {
					br, err := NewBatchReader(bad, BatchOptions{})
					if err != nil {
						return err
					}
					defer br.Release()
					for br.Next() {
					}
					return br.Err()
				}},
				{"NewFileReader", func() error { _, err := readFile(file); return err }},
			}
			for _, p := range paths {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := p.read()
				runtime.ReadMemStats(&after)
				assert.Assert(t, err != nil, "%s accepted it", p.name)
				if p.name != "Verify" {
					assert.Assert(t, errors.Is(err, ErrInvalid), "%s: %v", p.name, err)
				}
				if !c.layer {
					assert.Assert(t, errors.Is(err, errStructure), "%s: %v", p.name, err)
				}
				assert.Assert(t, strings.Contains(err.Error(), c.want), "%s: %v", p.name, err)
				assert.Assert(t, after.TotalAlloc-before.TotalAlloc < 16<<20, "%s: allocated %d bytes", p.name, after.TotalAlloc-before.TotalAlloc)
			}
			t.Logf("%v", Verify(bad))
		})
	}
}

// A file's dictionary block holding a record batch message (arrow-go's file reader loads a
// dictionary block's message as a dictionary batch without asking its type) is refused.
func TestFileBlockOfTheWrongMessageType(t *testing.T) {
	rec := record(t, cols("i64"), true)
	defer rec.Release()
	f := write(t, []arrow.RecordBatch{rec}, true)
	_, _, entries := footerOf(t, f) // record batch blocks
	end, footer, _ := footerOf(t, f)
	start, n, err := footer.vector(2, 24) // dictionary blocks
	assert.NilError(t, err)
	assert.Equal(t, n, 1)
	copy(f[end+start:end+start+24], f[entries[0]:entries[0]+24])
	_, err = readFile(f)
	assert.Assert(t, errors.Is(err, ErrInvalid), "%v", err)
	assert.Assert(t, strings.Contains(err.Error(), "holds message type 3, not 2"), "%v", err)
}

// A fuzzBase is a message of a stream arrow-go wrote, to forge, and the file of the same batches.
type fuzzBase struct {
	msgs []rawMessage
	at   int
	file []byte
}

func fuzzBases(t testing.TB) []fuzzBase {
	var bases []fuzzBase
	for _, rec := range []arrow.RecordBatch{record(t, broadColumns, true), nestedDictRecord(t)} {
		for _, opts := range [][]ipc.Option{nil, {ipc.WithLZ4()}} {
			msgs := splitStream(t, write(t, []arrow.RecordBatch{rec}, false, opts...))
			file := write(t, []arrow.RecordBatch{rec}, true, opts...)
			for i, m := range msgs {
				if m.lay.kind != 1 {
					bases = append(bases, fuzzBase{msgs: msgs, at: i, file: file})
				}
			}
		}
		rec.Release()
	}
	// Arrow C++'s (pyarrow's), metadata V4 included.
	for _, name := range []string{"v5-plain", "v5-lz4", "v4-plain", "nested-dict"} {
		s, err := os.ReadFile("testdata/pyarrow/" + name + ".arrows")
		assert.NilError(t, err)
		file, err := os.ReadFile("testdata/pyarrow/" + name + ".arrow")
		assert.NilError(t, err)
		msgs := splitStream(t, s)
		for i, m := range msgs {
			if m.lay.kind != 1 {
				bases = append(bases, fuzzBase{msgs: msgs, at: i, file: file})
			}
		}
	}
	return bases
}

// forge applies ops to f, four bytes each: what to change, which one, and by how much (an int16).
func (f *forged) forge(ops []byte) {
	for ; len(ops) >= 4; ops = ops[4:] {
		i, d := int(ops[1]), int64(int16(binary.LittleEndian.Uint16(ops[2:])))
		node := func(k int) {
			if len(f.nodes) > 0 {
				f.nodes[i%len(f.nodes)][k] += d
			}
		}
		buf := func(k int) {
			if len(f.buffers) > 0 {
				f.buffers[i%len(f.buffers)][k] += d
			}
		}
		switch ops[0] % 12 {
		case 0:
			node(0)
		case 1:
			node(1)
		case 2:
			buf(0)
		case 3:
			buf(1)
		case 4:
			if len(f.variadic) > 0 {
				f.variadic[i%len(f.variadic)] += d
			}
		case 5:
			if len(f.buffers) > 0 {
				j := i % len(f.buffers)
				f.buffers = append(f.buffers[:j], f.buffers[j+1:]...)
			}
		case 6:
			j := i % (len(f.buffers) + 1)
			f.buffers = append(f.buffers[:j], append([][2]int64{{0, 0}}, f.buffers[j:]...)...)
		case 7:
			if len(f.nodes) > 0 {
				j := i % len(f.nodes)
				f.nodes = append(f.nodes[:j], f.nodes[j+1:]...)
			}
		case 8:
			j := i % (len(f.nodes) + 1)
			f.nodes = append(f.nodes[:j], append([][2]int64{{d, 0}}, f.nodes[j:]...)...)
		case 9:
			f.version = int16(d % 6)
		case 10:
			f.rows += d
		case 11:
			if len(f.body) >= 8 {
				put64(f.body, (i*8)%len(f.body)&^7, d) // a compressed buffer's declared size
			}
		}
	}
}

// FuzzForgedBatch forges the metadata of batches arrow-go wrote (every type) structurally, as a
// byte fuzzer rarely gets past the flatbuffer checks to: every reader refuses or reads each,
// without a crash (a fatal out of memory is not a panic), an error other than ErrInvalid, or
// more than a few tens of MiB allocated.
func FuzzForgedBatch(f *testing.F) {
	bases := fuzzBases(f)
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{5, 1, 0, 0})
	f.Add(uint8(2), []byte{0, 3, 0, 1})
	f.Add(uint8(3), []byte{9, 0, 3, 0, 4, 0, 1, 0})
	f.Add(uint8(5), []byte{11, 2, 0, 0x7f})
	f.Fuzz(func(t *testing.T, which uint8, ops []byte) {
		b := bases[int(which)%len(bases)]
		fg := b.msgs[b.at].forged()
		fg.forge(ops)
		msg := fg.encode()
		var s []byte
		for i, m := range b.msgs {
			if i == b.at {
				s = append(s, msg...)
			} else {
				s = append(s, m.raw...)
			}
		}
		s = append(s, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0)
		slot, block := 3, 0
		if fg.kind == 2 {
			slot = 2
		}
		for _, m := range b.msgs[:b.at] {
			if m.lay.kind == fg.kind {
				block++
			}
		}
		file := withMessage(t, b.file, msg, slot, block)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		began := time.Now()
		for name, read := range map[string]func() error{
			"stream": func() error { _, err := readStreaming(s, StreamOptions{}); return err },
			"bytes":  func() error { _, err := drain(NewBytesReader(s, StreamOptions{})); return err },
			"file":   func() error { _, err := readFile(file); return err },
			"ReadStream": func() error {
				_, recs, err := ReadStream(s)
				for _, r := range recs {
					r.Release()
				}
				return err
			},
		} {
			if err := read(); err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("%s: not ErrInvalid: %v", name, err)
			}
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Fatalf("allocated %d bytes", n)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// deltaStream is a stream of n one-row batches, each after a dictionary delta adding one value
// of size bytes (arrow-go's writer with dictionary deltas).
func deltaStream(t testing.TB, n, size int) []byte {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithDictionaryDeltas(true))
	b := array.NewDictionaryBuilder(memory.NewGoAllocator(), dt).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	pad := strings.Repeat("x", size)
	for i := range n {
		assert.NilError(t, b.AppendString(fmt.Sprintf("%d%s", i, pad)))
		a := b.NewArray()
		rec := array.NewRecordBatch(schema, []arrow.Array{a}, 1)
		assert.NilError(t, w.Write(rec))
		rec.Release()
		a.Release()
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// Dictionary deltas cost what they copy, bounded: arrow-go concatenates a dictionary with its
// deltas at every batch, so 2,000 deltas of 1 KB each before as many one-row batches (a 2.8 MB
// body) would copy 2 GB; the stream is refused once the copies pass deltaLimitFor. 200 of them
// (20 MB of copies) read.
func TestDictionaryDeltasBounded(t *testing.T) {
	ok := deltaStream(t, 200, 1000)
	assert.NilError(t, Verify(ok))
	rows, err := drain(NewBytesReader(ok, StreamOptions{}))
	assert.NilError(t, err)
	assert.Equal(t, rows, int64(200))

	bad := deltaStream(t, 2000, 1000)
	assert.ErrorContains(t, Verify(bad), "dictionary deltas make arrow-go copy more than")
	began := time.Now()
	for name, read := range map[string]func() (int64, error){
		"bytes": func() (int64, error) { return drain(NewBytesReader(bad, StreamOptions{})) },
		"sized": func() (int64, error) { return readStreaming(bad, StreamOptions{Size: int64(len(bad))}) },
	} {
		_, err := read()
		assert.Assert(t, errors.Is(err, ErrInvalid), "%s: %v", name, err)
		assert.ErrorContains(t, err, "dictionary deltas make arrow-go copy more than", name)
	}
	t.Logf("%d bytes refused in %v: %v", len(bad), time.Since(began), err)
}
