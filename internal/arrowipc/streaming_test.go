package arrowipc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"gotest.tools/v3/assert"
)

// batches writes n batches of rows rows each (the columns of stream), as a stream or a file.
func batches(t testing.TB, n, rows int, file bool, opts ...ipc.Option) []byte {
	t.Helper()
	_, recs, err := ReadStream(stream(t, rows))
	assert.NilError(t, err)
	rec := recs[0]
	defer rec.Release()
	var buf bytes.Buffer
	w := ipcWriter(t, &buf, rec.Schema(), file, opts...)
	for range n {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// drain reads every batch of r (nil: the constructor failed) and returns the rows and the error.
func drain(r *StreamReader, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	defer r.Release()
	var rows int64
	for r.Next() {
		rows += r.RecordBatch().NumRows()
		for _, c := range r.RecordBatch().Columns() {
			// Read every value the way a writer would: a forged buffer that passed the checks
			// would panic here.
			for i := range c.Len() {
				_ = c.IsNull(i)
				_ = c.ValueStr(i)
			}
		}
	}
	return rows, r.Err()
}

func readStreaming(body []byte, opts StreamOptions) (int64, error) {
	return drain(NewStreamReader(bytes.NewReader(body), opts))
}

func readFile(body []byte) (int64, error) {
	return drain(NewFileReader(bytes.NewReader(body), int64(len(body))))
}

// Streams and files decode batch by batch, with or without a known size, compressed or not;
// dictionary columns come back decoded; the stream inside a file reads as a stream
// (SkipFileMagic: an HTTP answer in the file format).
func TestStreamReader(t *testing.T) {
	s := batches(t, 3, 7, false)
	for _, opts := range []StreamOptions{{}, {Size: int64(len(s))}} {
		r, err := NewStreamReader(bytes.NewReader(s), opts)
		assert.NilError(t, err)
		assert.Equal(t, r.Schema().Field(3).Type.ID(), arrow.STRING, "dictionary columns are decoded")
		n := 0
		for r.Next() {
			n++
			assert.Equal(t, r.RecordBatch().NumRows(), int64(7))
			assert.Equal(t, r.RecordBatch().Column(3).(*array.String).Value(3), "b")
		}
		assert.NilError(t, r.Err())
		assert.Equal(t, n, 3)
		r.Release()
	}
	rows, err := readStreaming(s[:len(s)-8], StreamOptions{})
	assert.NilError(t, err, "a stream may end without its end-of-stream marker")
	assert.Equal(t, rows, int64(21))

	rows, err = readStreaming(batches(t, 2, 50, false, ipc.WithLZ4()), StreamOptions{})
	assert.NilError(t, err)
	assert.Equal(t, rows, int64(100))
	rows, err = readStreaming(batches(t, 2, 50, false, ipc.WithZstd()), StreamOptions{})
	assert.NilError(t, err)
	assert.Equal(t, rows, int64(100))

	f := batches(t, 4, 5, true)
	rows, err = readFile(f)
	assert.NilError(t, err)
	assert.Equal(t, rows, int64(20))

	br := bufio.NewReader(bytes.NewReader(f))
	isFile, err := SkipFileMagic(br)
	assert.NilError(t, err)
	assert.Assert(t, isFile)
	rows, err = drain(NewStreamReader(br, StreamOptions{}))
	assert.NilError(t, err)
	assert.Equal(t, rows, int64(20))
	isFile, err = SkipFileMagic(bufio.NewReader(bytes.NewReader(s)))
	assert.NilError(t, err)
	assert.Assert(t, !isFile)
}

// firstBatch finds the first record batch message of a stream: its metadata and where its
// RecordBatch table is.
func firstBatch(t testing.TB, s []byte) (meta fbuf, msg, batch fbTable, body int) {
	t.Helper()
	for pos := 0; pos < len(s); {
		assert.Equal(t, binary.LittleEndian.Uint32(s[pos:]), uint32(0xFFFFFFFF))
		n := int(binary.LittleEndian.Uint32(s[pos+4:]))
		meta = fbuf(s[pos+8 : pos+8+n])
		root, _ := meta.u32(0)
		msg, err := meta.table(int(root))
		assert.NilError(t, err)
		typ, _ := msg.scalar(1, 1)
		bodyLen, _ := msg.scalar(3, 8)
		if typ[0] == 3 {
			batch, _, err := msg.sub(2)
			assert.NilError(t, err)
			return meta, msg, batch, pos + 8 + n
		}
		pos += 8 + n
		if bodyLen != nil {
			pos += int(binary.LittleEndian.Uint64(bodyLen))
		}
	}
	t.Fatal("no record batch")
	return nil, fbTable{}, fbTable{}, 0
}

// put64 overwrites the int64 at p of a flatbuffer.
func put64(b fbuf, p int, v int64) { binary.LittleEndian.PutUint64(b[p:], uint64(v)) }

// Forged metadata is refused with ErrInvalid before arrow-go allocates anything it claims, and
// reading it costs a few MiB at most, whatever it claims (a 1 TiB body, a body of 3 GiB of which
// 100 bytes arrive, buffers far outside the body, negative and overflowing offsets, counts out of
// range, a compressed buffer that claims to decode to 1 TiB).
func TestStreamReaderForged(t *testing.T) {
	bodyLenAt := func(msg fbTable) int { return msg.pos + msg.offset(3) }
	vec := func(batch fbTable, slot int) int {
		start, _, err := batch.vector(slot, 16)
		assert.NilError(t, err)
		return start
	}
	cases := []struct {
		name  string
		lz4   bool
		cut   bool // the stream ends 100 bytes into the forged batch's body
		forge func(meta fbuf, msg, batch fbTable)
	}{
		{name: "a 1 TiB body", forge: func(meta fbuf, msg, _ fbTable) { put64(meta, bodyLenAt(msg), 1<<40) }},
		{name: "a 3 GiB body cut short", cut: true, forge: func(meta fbuf, msg, _ fbTable) { put64(meta, bodyLenAt(msg), 3<<30) }},
		{name: "a negative body", forge: func(meta fbuf, msg, _ fbTable) { put64(meta, bodyLenAt(msg), -8) }},
		{name: "a buffer past the body", forge: func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 2)+8, 1<<40) }},
		{name: "a negative buffer offset", forge: func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 2)+16, -64) }},
		{name: "an overflowing buffer", forge: func(meta fbuf, _, batch fbTable) {
			put64(meta, vec(batch, 2)+16, math.MaxInt64-4)
			put64(meta, vec(batch, 2)+24, 16)
		}},
		{name: "a negative node length", forge: func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 1), -1) }},
		{name: "a node of 2^50 values", forge: func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 1), 1<<50) }},
		{name: "more nulls than values", forge: func(meta fbuf, _, batch fbTable) { put64(meta, vec(batch, 1)+8, 1000) }},
		{name: "2^40 rows", forge: func(meta fbuf, _, batch fbTable) { put64(meta, batch.pos+batch.offset(0), 1<<40) }},
		{name: "rows beyond the buffers", forge: func(meta fbuf, _, batch fbTable) {
			put64(meta, batch.pos+batch.offset(0), 1<<20)
			_, n, _ := batch.vector(1, 16)
			for i := range n {
				put64(meta, vec(batch, 1)+16*i, 1<<20)
				put64(meta, vec(batch, 1)+16*i+8, 0)
			}
		}},
		{name: "a compressed buffer of 1 TiB", lz4: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []ipc.Option
			if tc.lz4 {
				opts = append(opts, ipc.WithLZ4())
			}
			s := batches(t, 1, 10, false, opts...)
			meta, msg, batch, body := firstBatch(t, s)
			if tc.forge != nil {
				tc.forge(meta, msg, batch)
			} else {
				// The first buffer's decompressed length, at the start of its bytes in the body.
				off := binary.LittleEndian.Uint64(meta[vec(batch, 2)+16:]) // buffer 1: the values of id
				put64(fbuf(s), body+int(off), 1<<40)
			}
			if tc.cut {
				s = s[:body+100]
			}
			for name, read := range map[string]func() (int64, error){
				"pipe":  func() (int64, error) { return readStreaming(s, StreamOptions{}) },
				"sized": func() (int64, error) { return readStreaming(s, StreamOptions{Size: int64(len(s))}) },
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := read()
				runtime.ReadMemStats(&after)
				assert.Assert(t, errors.Is(err, ErrInvalid), "%s: %v", name, err)
				t.Logf("%s: %v", name, err)
				assert.Assert(t, after.TotalAlloc-before.TotalAlloc < 16<<20, "%s: allocated %d bytes", name, after.TotalAlloc-before.TotalAlloc)
			}
		})
	}
}

// Every truncation and many corruptions of a valid stream and file are refused with ErrInvalid
// (or decoded), never a panic.
func TestStreamReaderHostile(t *testing.T) {
	for _, file := range []bool{false, true} {
		good := batches(t, 2, 6, file)
		try := func(body []byte) {
			t.Helper()
			read := func() (int64, error) { return readStreaming(body, StreamOptions{}) }
			if file {
				read = func() (int64, error) { return readFile(body) }
			}
			if _, err := read(); err != nil {
				assert.Assert(t, errors.Is(err, ErrInvalid), "%v", err)
			}
		}
		for n := range len(good) {
			try(good[:n])
		}
		for i := range good {
			if file && i%4 != 0 {
				continue // the file's stream is the stream's: its trailer and a sample suffice
			}
			for _, v := range []byte{0x00, 0xff} {
				bad := bytes.Clone(good)
				bad[i] = v
				try(bad)
			}
		}
	}
}

// An error of the source itself is returned as it is, not as ErrInvalid.
func TestStreamReaderSourceError(t *testing.T) {
	s := batches(t, 2, 6, false)
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(s[:len(s)/2]), iotestErr{boom})
	_, err := drain(NewStreamReader(r, StreamOptions{}))
	assert.Assert(t, errors.Is(err, boom), "%v", err)
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

func FuzzReadStreaming(f *testing.F) {
	f.Add(batches(f, 2, 3, false), false)
	f.Add(batches(f, 1, 3, false, ipc.WithLZ4()), false)
	f.Add(batches(f, 2, 3, true), true)
	f.Add(noSchemaFile(f, batches(f, 2, 3, true, ipc.WithZstd())), true)
	f.Fuzz(func(t *testing.T, body []byte, file bool) {
		var err error
		if file {
			_, err = readFile(body)
		} else {
			_, err = readStreaming(body, StreamOptions{})
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("not ErrInvalid: %v", err)
		}
	})
}
