package arrowipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// An Arrow IPC file is the magic and its padding, messages, a footer and the footer's length, and
// the magic again. The footer holds the schema and the index of the dictionary and record batch
// blocks, and it is what a reader of the file format reads: a file need not begin with a schema
// message. Apache Arrow JS (tableToIPC(t, "file"), the LanceDB Node SDK's Arrow) writes the schema
// only in the footer, so reading the file as the stream before its footer failed on its files
// ("invalid message type (got=RecordBatch, want=Schema)").
//
// fileReader reads a file the footer's way, with arrow-go's ipc.FileReader, and bounds it as
// NewStreamReader bounds a stream: arrow-go trusts the footer's flatbuffer (a vector length goes
// to make() unchecked) and each block's message metadata, so before arrow-go sees either:
//
//   - the footer is at most maxFooter bytes, inside the file, and every table, vector and string in
//     it lies inside it (Verify's checks; its schema as a schema message's);
//   - every block lies between the magic and the footer, 8-byte aligned, its metadata at most
//     maxIPCMetadata, and all blocks together are no larger than the file (a footer cannot make us
//     read one block a million times);
//   - each block's message passes checkLayout (buffers inside the body, counts in range) and its
//     compressed buffers' declared sizes are bounded, read from the file before arrow-go allocates;
//   - each block holds the message its index says (a dictionary or a record batch) and matches the
//     footer's schema (checkStructure: the nodes and buffers its fields need, large enough).
//
// Bodies are read whole by arrow-go, but a body is at most what the file holds.

// maxFooter bounds a file's footer: a schema and 24 bytes per batch (64 MiB indexes millions).
const maxFooter = 64 << 20

// fileBlock is one entry of the footer's index.
type fileBlock struct {
	offset int64
	meta   int64 // the message's prefix and metadata, padded
	body   int64
}

// footerBlocks verifies a footer flatbuffer (at most the bytes before it, end) and returns its
// dictionary and record batch blocks, checked against the file.
func footerBlocks(footer fbuf, end int64) (sch *schemaShape, dicts, batches []fileBlock, err error) {
	root, err := footer.u32(0)
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := footer.table(int(root))
	if err != nil {
		return nil, nil, nil, err
	}
	schema, ok, err := t.sub(1)
	if err != nil {
		return nil, nil, nil, err
	}
	if !ok {
		return nil, nil, nil, errors.New("the footer has no schema")
	}
	if err := checkSchema(schema); err != nil {
		return nil, nil, nil, err
	}
	if sch, err = parseSchemaShape(schema); err != nil {
		return nil, nil, nil, fmt.Errorf("the schema: %w", err)
	}
	if err := keyValues(t, 4); err != nil {
		return nil, nil, nil, err
	}
	var total int64
	read := func(slot int) ([]fileBlock, error) {
		start, n, err := t.vector(slot, 24)
		if err != nil {
			return nil, err
		}
		blocks := make([]fileBlock, n) // n*24 bytes lie inside the footer
		for i := range n {
			p := start + 24*i
			b := fileBlock{
				offset: int64(binary.LittleEndian.Uint64(footer[p:])),
				meta:   int64(int32(binary.LittleEndian.Uint32(footer[p+8:]))),
				body:   int64(binary.LittleEndian.Uint64(footer[p+16:])),
			}
			switch {
			case b.offset < 8 || b.offset%8 != 0 || b.meta < 8 || b.meta%8 != 0 || b.meta > maxIPCMetadata+8 ||
				b.body < 0 || b.body%8 != 0 || b.offset > end || b.meta > end-b.offset || b.body > end-b.offset-b.meta:
				return nil, fmt.Errorf("footer block %d (offset %d, metadata %d, body %d bytes) does not lie between the magic and the footer at %d",
					i, b.offset, b.meta, b.body, end)
			}
			if total += b.meta + b.body; total > end {
				return nil, fmt.Errorf("the footer's blocks add up to more than the %d bytes before it", end)
			}
			blocks[i] = b
		}
		return blocks, nil
	}
	if dicts, err = read(2); err != nil {
		return nil, nil, nil, err
	}
	if batches, err = read(3); err != nil {
		return nil, nil, nil, err
	}
	return sch, dicts, batches, nil
}

// checkBlock reads a block's message metadata and checks it as the stream reader checks a
// message (checkLayout, checkStructure against the footer's schema), with its compressed
// buffers' sizes read from the file. kind is the message the block must hold (2: a dictionary
// batch, 3: a record batch): arrow-go reads a dictionary block's message as one without asking.
func checkBlock(r io.ReaderAt, b fileBlock, sch *schemaShape, kind byte) error {
	meta := make([]byte, b.meta) // at most maxIPCMetadata+8 (footerBlocks)
	if _, err := r.ReadAt(meta, b.offset); err != nil {
		return fmt.Errorf("read the block at %d: %w", b.offset, err)
	}
	prefix := int64(4) // before Arrow 0.15: the length alone
	if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
		prefix = 8
	}
	if n := int64(binary.LittleEndian.Uint32(meta[prefix-4:])); n != b.meta-prefix {
		return fmt.Errorf("the block at %d holds %d bytes of metadata, its footer entry %d", b.offset, n, b.meta-prefix)
	}
	lay, err := checkLayout(fbuf(meta[prefix:]), b.body)
	if err != nil {
		return err
	}
	if lay.bodyLen != b.body {
		return fmt.Errorf("the block at %d has a body of %d bytes, its footer entry %d", b.offset, lay.bodyLen, b.body)
	}
	if lay.kind != kind {
		return fmt.Errorf("the block at %d holds message type %d, not %d", b.offset, lay.kind, kind)
	}
	var word [8]byte
	if _, err = lay.checkCompressed(func(off int64) (int64, error) {
		if _, err := r.ReadAt(word[:], b.offset+b.meta+off); err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint64(word[:])), nil
	}); err != nil {
		return err
	}
	return sch.checkStructure(&lay)
}

// NewFileReader reads the record batches of an Arrow IPC file of size bytes, in the order of its
// footer's index (fileReader's checks first).
func NewFileReader(r io.ReaderAt, size int64) (sr *StreamReader, err error) {
	const head, tail = 8, 10 // magic + padding; footer length + magic
	if size < head+tail {
		return nil, fmt.Errorf("%w: an Arrow IPC file of %d bytes is too short", ErrInvalid, size)
	}
	var trailer [tail]byte
	if _, err := r.ReadAt(trailer[:], size-tail); err != nil {
		return nil, fmt.Errorf("read the Arrow IPC file trailer: %w", err)
	}
	var magic [6]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return nil, fmt.Errorf("read the Arrow IPC file magic: %w", err)
	}
	if string(magic[:]) != arrowMagic || string(trailer[4:]) != arrowMagic {
		return nil, fmt.Errorf("%w: not an Arrow IPC file (no ARROW1 magic at both ends)", ErrInvalid)
	}
	footerLen := int64(binary.LittleEndian.Uint32(trailer[:4]))
	end := size - tail - footerLen
	if footerLen <= 0 || footerLen > maxFooter || end < head {
		return nil, fmt.Errorf("%w: Arrow IPC file footer of %d bytes does not fit the file (or the %d bytes a footer may have)", ErrInvalid, footerLen, maxFooter)
	}
	footer := make([]byte, footerLen)
	if _, err := r.ReadAt(footer, end); err != nil {
		return nil, fmt.Errorf("read the Arrow IPC file footer: %w", err)
	}
	sch, dicts, blocks, err := footerBlocks(fbuf(footer), end)
	if err != nil {
		return nil, fmt.Errorf("%w: the file's footer: %w", ErrInvalid, err)
	}
	for _, b := range dicts {
		if err := checkBlock(r, b, sch, 2); err != nil {
			return nil, fmt.Errorf("%w: dictionary: %w", ErrInvalid, err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			sr, err = nil, fmt.Errorf("%w: %v", ErrInvalid, p)
		}
	}()
	// The footer was checked; arrow-go reads it again (from the file's end), and the dictionaries.
	// arrow-go reads a batch's buffers by their index in the metadata's vector without checking
	// the vector's length: a batch that lists fewer buffers than its schema needs makes it read
	// sizes from whatever follows (found by FuzzReadStreaming: a 212 TB allocation, a fatal out of
	// memory, not a panic). checkBlock bounds the buffers the metadata lists; the capped
	// allocator bounds whatever arrow-go allocates beyond them, live across the file's batches.
	mem := &cappedAllocator{inner: memory.NewGoAllocator(), limit: decodeLimit(size)}
	fr, err := ipc.NewFileReader(io.NewSectionReader(r, 0, size), ipc.WithEnsureNativeEndian(true),
		ipc.WithMetadataSizeLimit(maxIPCMetadata+8), ipc.WithBodySizeLimit(end), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if fr.NumRecords() != len(blocks) {
		fr.Close()
		return nil, fmt.Errorf("%w: the footer indexes %d batches, arrow-go read %d", ErrInvalid, len(blocks), fr.NumRecords())
	}
	fb := &fileBatches{fr: fr, r: r, blocks: blocks, shape: sch}
	return &StreamReader{r: fb, wrap: wrapInvalid, schema: undictionary(fr.Schema())}, nil
}

// fileBatches is the file's batches, one at a time, each block checked before arrow-go reads it.
type fileBatches struct {
	fr     *ipc.FileReader
	r      io.ReaderAt
	blocks []fileBlock
	shape  *schemaShape
	next   int
	cur    arrow.RecordBatch
	err    error
}

func (f *fileBatches) Next() bool {
	if f.cur != nil {
		f.cur.Release()
		f.cur = nil
	}
	if f.err != nil || f.next >= len(f.blocks) {
		return false
	}
	i := f.next
	f.next++
	if err := checkBlock(f.r, f.blocks[i], f.shape, 3); err != nil {
		f.err = fmt.Errorf("%w: record batch %d: %w", ErrInvalid, i, err)
		return false
	}
	rec, err := f.fr.RecordBatchAt(i)
	if err != nil {
		f.err = fmt.Errorf("%w: record batch %d: %w", ErrInvalid, i, err)
		return false
	}
	f.cur = rec
	return true
}

func (f *fileBatches) RecordBatch() arrow.RecordBatch { return f.cur }
func (f *fileBatches) Err() error                     { return f.err }

func (f *fileBatches) Release() {
	if f.cur != nil {
		f.cur.Release()
		f.cur = nil
	}
	f.fr.Close()
}

// wrapInvalid is an error of the input as ErrInvalid (once).
func wrapInvalid(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}
