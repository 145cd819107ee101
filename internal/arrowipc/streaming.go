package arrowipc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A StreamReader decodes an Arrow IPC stream (or an IPC file: NewFileReader, file.go) one record
// batch at a time, from an untrusted source too large to hold whole (ReadStream's case). arrow-go's own
// readers allocate what each message's metadata claims (a body length, a decompressed size, a
// flatbuffer vector length) before anything checks it against the bytes present; this reader
// frames the messages itself and hands arrow-go only messages that passed the checks:
//
//   - the metadata is at most 4 MiB and within the bytes left (when the size is known), and every
//     table, vector and string in it lies inside it (Verify's checks);
//   - the body length is non-negative, within the bytes left (or Options.MaxBody when the size is
//     unknown), and the body is read as it arrives: memory follows the bytes actually present,
//     never the length claimed, so a truncated stream that claims gigabytes costs what it sent;
//   - every buffer of a batch lies inside its body (no negative or overflowing offsets), every
//     node's length and null count are in range, variadic buffer counts fit the buffers, and
//     compressed buffers declare decompressed sizes bounded by a ratio of the body;
//   - a batch's field nodes, buffers and variadic counts are exactly the ones its schema's fields
//     need, each buffer arrow-go reads aligned and large enough for its node's length
//     (checkStructure, structure.go): arrow-go's loader takes them by index, unchecked;
//   - every decoded array is validated (offsets, child lengths, buffer sizes) before the caller
//     sees it. Dictionary-encoded top-level columns come back decoded, as ReadStream's do.
//
// It holds one batch at a time: a batch is valid until the next call to Next. Every failure of
// the input wraps ErrInvalid (an error of the underlying reader is returned as it is).
type StreamReader struct {
	r interface {
		Next() bool
		RecordBatch() arrow.RecordBatch
		Err() error
		Release()
	}
	wrap   func(error) error // an error of r, as the caller should see it
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

// StreamOptions bound a StreamReader.
type StreamOptions struct {
	// Size is the number of bytes the source holds, when known (a file); 0: unknown (a pipe),
	// then MaxBody bounds each message body.
	Size int64
	// MaxBody bounds one message body when Size is unknown; 0: DefaultMaxBody.
	MaxBody int64
	// Reserve, when set, is called before a compressed batch is decoded with the bytes its
	// buffers decompress to (what decoding it allocates, checked against the body first); its
	// error ends the stream and is Err as it is.
	Reserve func(n int64) error
}

// DefaultMaxBody bounds one message body of a stream of unknown size (record batches of real
// exports are far smaller; a larger one is refused with a clear error rather than buffered).
const DefaultMaxBody = 4 << 30

// compressedSlack is what a compressed batch may decode to beyond ipcCompressedFactor times its
// body.
const compressedSlack = 1 << 20

// decodeLimit is what arrow-go may hold allocated, live, while it decodes a source of size bytes:
// the ratio checkCompressed allows every compressed buffer (and, uncompressed, far more than a
// copy of each body), so it refuses only sizes no listed buffer could declare.
func decodeLimit(size int64) int64 {
	return min(size, 1<<40)*ipcCompressedFactor + compressedSlack + ipcAllocSlack
}

// maxNodeLength bounds one array node's length (rows or child values) beyond what its body could
// hold 8 per byte: a column of nulls has no buffers at all, but 2^31 of them is already more than
// any record batch we write.
const maxNodeLength = math.MaxInt32

// NewStreamReader reads an Arrow IPC stream from r (buffered here; r need not be). It reads the
// schema message before it returns.
func NewStreamReader(r io.Reader, opts StreamOptions) (*StreamReader, error) {
	if _, ok := r.(*bufio.Reader); !ok {
		r = bufio.NewReaderSize(r, 64<<10)
	}
	src := &messageSource{r: r, left: opts.Size, maxBody: opts.MaxBody, reserve: opts.Reserve}
	if opts.Size <= 0 {
		src.left = -1
	}
	if src.maxBody <= 0 {
		src.maxBody = DefaultMaxBody
	}
	src.refs.Store(1)
	return newStreamReader(src)
}

// NewBytesReader reads an Arrow IPC stream held in memory (a request body) as NewStreamReader
// does, without copying it: every message is a slice of body, so the buffers of an uncompressed
// batch are body's own bytes and decoding it allocates only the arrays' headers. body must not
// change while a batch read from it is in use (arrow-go swaps a big-endian stream's values in
// place: its bytes then change instead of being copied).
func NewBytesReader(body []byte, opts StreamOptions) (*StreamReader, error) {
	br := bytes.NewReader(body)
	src := &messageSource{r: br, mem: br, whole: body, left: int64(len(body)), reserve: opts.Reserve}
	src.refs.Store(1)
	return newStreamReader(src)
}

// arrowMagic opens and closes an Arrow IPC file.
const arrowMagic = "ARROW1"

func newStreamReader(src *messageSource) (sr *StreamReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			sr, err = nil, fmt.Errorf("%w: %v", ErrInvalid, p)
		}
	}()
	// The checks above bound the buffers a batch's metadata lists; arrow-go reads a buffer by its
	// index in that list without checking its length, so a batch listing fewer buffers than its
	// schema needs has arrow-go read a decompressed size from whatever follows (a fuzzed file
	// asked for 212 TB: a fatal out of memory, not a panic). The capped allocator bounds every
	// allocation arrow-go makes, live, by what the source may hold.
	size := src.left
	if size < 0 {
		size = src.maxBody
	}
	mem := &cappedAllocator{inner: memory.NewGoAllocator(), limit: allocLimit(int(min(size, 1<<40)), true)}
	r, err := ipc.NewReaderFromMessageReader(src, ipc.WithEnsureNativeEndian(true), ipc.WithAllocator(mem))
	if err != nil {
		return nil, src.wrap(err)
	}
	return &StreamReader{r: r, wrap: src.wrap, schema: undictionary(r.Schema())}, nil
}

// Schema is the stream's schema (dictionary-encoded top-level columns as their value types).
func (s *StreamReader) Schema() *arrow.Schema { return s.schema }

// Next decodes the next record batch; false at the end of the stream or on an error (Err).
func (s *StreamReader) Next() (ok bool) {
	s.release()
	if s.err != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			s.release()
			s.err, ok = fmt.Errorf("%w: %v", ErrInvalid, p), false
		}
	}()
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			s.err = s.wrap(err)
		}
		return false
	}
	rec, err := plainRecord(s.schema, s.r.RecordBatch())
	if err != nil {
		s.err = fmt.Errorf("%w: %w", ErrInvalid, err)
		return false
	}
	s.cur = rec
	return true
}

// RecordBatch is the batch Next decoded, valid until the next call to Next or Release.
func (s *StreamReader) RecordBatch() arrow.RecordBatch { return s.cur }

// Err is the error that ended Next, if any.
func (s *StreamReader) Err() error { return s.err }

// Release frees the current batch and the reader.
func (s *StreamReader) Release() {
	s.release()
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	if s.err == nil {
		s.err = errors.New("arrowipc: reader released")
	}
}

func (s *StreamReader) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// messageSource is an ipc.MessageReader that frames, checks and reads one message at a time.
type messageSource struct {
	r io.Reader
	// mem is r when it reads whole (NewBytesReader): messages are slices of whole, not copies.
	mem     *bytes.Reader
	whole   []byte
	reserve func(int64) error
	left    int64 // bytes the source has left; -1: unknown
	maxBody int64
	refs    atomic.Int64
	msg     *ipc.Message
	started bool         // a message was read (the first must be the schema)
	shape   *schemaShape // the schema's, every batch is checked against (checkStructure)
	// failure is the first error Message returned: the ipc reader wraps errors with %v in places,
	// so wrap maps what it reports back to what happened.
	failure error
}

func (m *messageSource) Retain() { m.refs.Add(1) }

func (m *messageSource) Release() {
	if m.refs.Add(-1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// wrap is the error the ipc reader reported, as the caller should see it.
func (m *messageSource) wrap(err error) error {
	if m.failure != nil {
		return m.failure
	}
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

// ErrNoSchema is a stream whose first message is not its schema. An Arrow IPC file read as the
// stream before its footer may be so: Arrow JS writes a file's schema only in the footer, which
// only a reader that can seek to the end (NewFileReader) reaches.
var ErrNoSchema = errors.New("the stream does not begin with its schema message")

// errTruncated is a stream cut short.
var errTruncated = errors.New("the stream ends inside a message")

// read fills buf from the source, counting what is left.
func (m *messageSource) read(buf []byte) error {
	if _, err := io.ReadFull(m.r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %w", ErrInvalid, errTruncated)
		}
		return err
	}
	if m.left >= 0 {
		m.left -= int64(len(buf))
	}
	return nil
}

// firstReadCap is what a message may make us allocate before its bytes arrive. It was 64 KiB:
// a 10 MB batch (20,000 rows of float32[128]) then went through 9 buffers, each zeroed and the
// bytes so far copied into the next — a third of the client's CPU on a full scan. 8 MiB holds
// most batches whole at once and bounds what a lying length costs per message (this reader's
// users are clients reading one answer or file at a time: the CLI, the bench; a server reading
// many untrusted streams at once would want it smaller).
const firstReadCap = 8 << 20

// readGrowing reads n bytes into a buffer that grows as they arrive (doubling from
// firstReadCap), so a length that claims more than the source holds costs at most
// firstReadCap, or twice what it sent.
func (m *messageSource) readGrowing(n int64) ([]byte, error) {
	if m.mem != nil {
		if int64(m.mem.Len()) < n {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, errTruncated)
		}
		off := m.mem.Size() - int64(m.mem.Len())
		if _, err := m.mem.Seek(n, io.SeekCurrent); err != nil {
			return nil, err
		}
		m.left -= n
		return m.whole[off : off+n : off+n], nil // capped: nothing appends into the body
	}
	buf := make([]byte, 0, min(n, firstReadCap))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			next := make([]byte, len(buf), min(n, int64(cap(buf))*2))
			copy(next, buf)
			buf = next
		}
		chunk := buf[len(buf):cap(buf)]
		if err := m.read(chunk); err != nil {
			return nil, err
		}
		buf = buf[:cap(buf)]
	}
	return buf, nil
}

// Message reads, checks and returns the next message; io.EOF at the end of the stream.
func (m *messageSource) Message() (*ipc.Message, error) {
	msg, err := m.next()
	if err != nil && !errors.Is(err, io.EOF) && m.failure == nil {
		m.failure = err
	}
	return msg, err
}

func (m *messageSource) next() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if m.left == 0 {
		return nil, io.EOF // all of a known size read (an IPC file's stream may lack its end marker)
	}
	var word [4]byte
	if _, err := io.ReadFull(m.r, word[:]); errors.Is(err, io.EOF) {
		// Nothing at all left: a stream may end without its end-of-stream marker at a message
		// boundary (arrow-go's writers write it; others need not).
		return nil, io.EOF
	} else if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, errTruncated)
		}
		return nil, err
	}
	if m.left >= 0 {
		m.left -= 4
	}
	n := binary.LittleEndian.Uint32(word[:])
	if n == 0xFFFFFFFF {
		if err := m.read(word[:]); err != nil {
			return nil, err
		}
		n = binary.LittleEndian.Uint32(word[:])
	}
	if n == 0 {
		return nil, io.EOF
	}
	if n < 8 || n > maxIPCMetadata || (m.left >= 0 && int64(n) > m.left) {
		return nil, fmt.Errorf("%w: message metadata of %d bytes does not fit the stream", ErrInvalid, n)
	}
	meta, err := m.readGrowing(int64(n))
	if err != nil {
		return nil, err
	}
	limit := m.maxBody
	if m.left >= 0 {
		limit = m.left
	}
	lay, err := checkLayout(fbuf(meta), limit)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !m.started && lay.kind != 1 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, ErrNoSchema)
	}
	if lay.kind == 1 {
		if m.started {
			return nil, fmt.Errorf("%w: a second schema message", ErrInvalid)
		}
		if m.shape, err = parseSchemaShape(lay.schema); err != nil {
			return nil, fmt.Errorf("%w: the schema: %w", ErrInvalid, err)
		}
		size := m.left
		if size < 0 {
			size = m.maxBody
		}
		m.shape.deltaLimit = deltaLimitFor(size)
	}
	m.started = true
	body, err := m.readGrowing(lay.bodyLen)
	if err != nil {
		return nil, err
	}
	decoded, err := lay.checkCompressed(func(off int64) (int64, error) { return int64(binary.LittleEndian.Uint64(body[off:])), nil })
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// Before arrow-go loads the batch: its nodes and buffers are the ones the schema needs.
	if err := m.shape.checkStructure(&lay); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if decoded > 0 && m.reserve != nil {
		if err := m.reserve(decoded); err != nil {
			return nil, err
		}
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return m.msg, nil
}

// layout is what checkLayout learned of a message: its body length and, for a batch, its buffers.
type layout struct {
	kind       byte  // the message type: 1 schema, 2 dictionary batch, 3 record batch
	version    int16 // the metadata version (4: V5)
	bodyLen    int64
	compressed bool
	rows       int64
	dictID     int64      // of a dictionary batch
	delta      bool       // a dictionary batch is a delta
	nodes      [][2]int64 // length, null count
	buffers    [][2]int64 // offset, length
	variadic   []int64    // variadic buffer counts
	schema     fbTable    // of a schema message
	// decoded is each compressed buffer's size once decoded (checkCompressed).
	decoded []int64
}

// size is buffer i's size as the loader sees it: decoded, if compressed.
func (l *layout) size(i int) int64 {
	if l.compressed {
		return l.decoded[i]
	}
	return l.buffers[i][1]
}

// checkLayout verifies a message's metadata (Verify's checks), then the layout of a batch's body:
// every buffer inside the body, every node's counts in range, variadic counts that fit the buffers.
// The body may be at most limit bytes (what the source has left, or the limit of a pipe).
func checkLayout(b fbuf, limit int64) (layout, error) {
	bodyLen, _, err := checkIPCMessage(b)
	if err != nil {
		return layout{}, err
	}
	if bodyLen < 0 || bodyLen > limit {
		return layout{}, fmt.Errorf("message body of %d bytes does not fit the %d bytes the stream may have left", bodyLen, limit)
	}
	// checkIPCMessage checked these tables resolve.
	root, _ := b.u32(0)
	msg, _ := b.table(int(root))
	typ, _ := msg.scalar(1, 1)
	version, err := msg.i16(0, 0)
	if err != nil {
		return layout{}, err
	}
	lay := layout{kind: typ[0], version: version, bodyLen: bodyLen}
	header, _, _ := msg.sub(2)
	var batch fbTable
	switch typ[0] {
	case 1: // Schema
		if bodyLen != 0 {
			return layout{}, fmt.Errorf("a schema message with a body of %d bytes", bodyLen)
		}
		lay.schema = header
		return lay, nil
	case 2: // DictionaryBatch
		data, ok, _ := header.sub(1)
		if !ok {
			return layout{}, errors.New("a dictionary batch without data")
		}
		if lay.dictID, err = header.i64(0, 0); err != nil {
			return layout{}, err
		}
		if lay.delta, err = header.boolean(2); err != nil {
			return layout{}, err
		}
		batch = data
	default: // RecordBatch
		batch = header
	}
	rows := int64(0)
	if v, err := batch.scalar(0, 8); err != nil {
		return layout{}, err
	} else if v != nil {
		rows = int64(binary.LittleEndian.Uint64(v))
	}
	if rows < 0 || rows > maxNodeLength {
		return layout{}, fmt.Errorf("a batch of %d rows", rows)
	}
	lay.rows = rows
	if comp, ok, err := batch.sub(3); err != nil {
		return layout{}, err
	} else if ok {
		codec, err := comp.scalar(0, 1)
		if err != nil {
			return layout{}, err
		}
		if codec != nil && codec[0] > 1 { // LZ4_FRAME (0, the default), ZSTD (1)
			return layout{}, fmt.Errorf("unknown compression codec %d", codec[0])
		}
		lay.compressed = true
	}
	maxLen := max(int64(maxNodeLength), bodyLen*8)
	if lay.compressed {
		maxLen = max(maxLen, (bodyLen*ipcCompressedFactor+compressedSlack)*8)
	}
	start, n, err := batch.vector(1, 16) // nodes: length, null count
	if err != nil {
		return layout{}, err
	}
	lay.nodes = make([][2]int64, n)
	for i := range n {
		p := start + 16*i
		length := int64(binary.LittleEndian.Uint64(b[p:]))
		nulls := int64(binary.LittleEndian.Uint64(b[p+8:]))
		if length < 0 || length > maxLen || nulls < 0 || nulls > length {
			return layout{}, fmt.Errorf("array node %d: length %d, %d nulls", i, length, nulls)
		}
		lay.nodes[i] = [2]int64{length, nulls}
	}
	start, n, err = batch.vector(2, 16) // buffers: offset, length
	if err != nil {
		return layout{}, err
	}
	lay.buffers = make([][2]int64, n)
	for i := range n {
		p := start + 16*i
		off := int64(binary.LittleEndian.Uint64(b[p:]))
		length := int64(binary.LittleEndian.Uint64(b[p+8:]))
		// off+length cannot overflow once both are within bodyLen.
		if off < 0 || length < 0 || off > bodyLen || length > bodyLen-off {
			return layout{}, fmt.Errorf("buffer %d (offset %d, %d bytes) is outside the body of %d bytes", i, off, length, bodyLen)
		}
		lay.buffers[i] = [2]int64{off, length}
	}
	start, nv, err := batch.vector(4, 8) // variadic buffer counts
	if err != nil {
		return layout{}, err
	}
	var variadic int64
	lay.variadic = make([]int64, nv)
	for i := range nv {
		c := int64(binary.LittleEndian.Uint64(b[start+8*i:]))
		lay.variadic[i] = c
		if c < 0 || c > int64(n) {
			return layout{}, fmt.Errorf("variadic buffer count %d of %d buffers", c, n)
		}
		if variadic += c; variadic > int64(n) {
			return layout{}, fmt.Errorf("variadic buffer counts add up to more than the %d buffers", n)
		}
	}
	return lay, nil
}

// checkCompressed bounds what a compressed batch's buffers decode to: each starts with its
// decompressed length (-1: stored as is), which arrow-go allocates before decompressing. sizeAt
// reads the int64 at an offset of the body (checkLayout put every buffer inside it). It returns
// their sum: what decoding the batch allocates.
func (l *layout) checkCompressed(sizeAt func(off int64) (int64, error)) (int64, error) {
	if !l.compressed {
		return 0, nil
	}
	limit := l.bodyLen*ipcCompressedFactor + compressedSlack
	var total int64
	l.decoded = make([]int64, len(l.buffers))
	for i, buf := range l.buffers {
		if buf[1] == 0 {
			continue
		}
		if buf[1] < 8 {
			return 0, fmt.Errorf("compressed buffer %d of %d bytes has no length", i, buf[1])
		}
		n, err := sizeAt(buf[0])
		if err != nil {
			return 0, err
		}
		if n == -1 { // stored as is, after the length
			l.decoded[i] = buf[1] - 8
			continue
		}
		l.decoded[i] = n
		if n < 0 || n > limit-total {
			return 0, fmt.Errorf("compressed buffers decode to more than %d bytes (%d times the body)", limit, ipcCompressedFactor)
		}
		total += n
	}
	return total, nil
}

// SkipFileMagic reports whether r starts with an Arrow IPC file's magic; if so, it skips the
// magic and its padding, and what follows is the file's stream (its footer follows the end of
// stream marker: an HTTP answer in the file format can be read as a stream so). A file whose
// schema is only in its footer (Arrow JS) then fails with ErrNoSchema: only NewFileReader reads it.
func SkipFileMagic(r *bufio.Reader) (bool, error) {
	head, err := r.Peek(8)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if !bytes.HasPrefix(head, []byte(arrowMagic)) || len(head) < 8 {
		return false, nil
	}
	_, err = r.Discard(8)
	return true, err
}
