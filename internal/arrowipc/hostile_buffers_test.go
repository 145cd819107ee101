package arrowipc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"gotest.tools/v3/assert"
)

// TestBatchListingTooFewBuffers: a compressed record batch whose metadata lists fewer buffers
// than its schema needs. arrow-go indexes the list without checking its length and read a
// decompressed size of 212 TB from the bytes after it: the allocation was a fatal out of memory,
// which no recover catches (FuzzReadStreaming found the file form). Both readers now refuse it as
// invalid input: the file as the fuzzer wrote it, and the same batch after the schema in a
// stream, the form a request body has.
func TestBatchListingTooFewBuffers(t *testing.T) {
	raw, err := os.ReadFile("testdata/fuzz/FuzzReadStreaming/8deb62106c36ebec")
	assert.NilError(t, err)
	lines := strings.Split(string(raw), "\n")
	quoted := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	s, err := strconv.Unquote(quoted)
	assert.NilError(t, err)
	file := []byte(s)

	_, err = readFile(file)
	assert.Assert(t, errors.Is(err, ErrInvalid), "file: %v", err)
	// Refused by the structural check, before arrow-go's loader (the capped allocator is the
	// second line).
	assert.Assert(t, errors.Is(err, errStructure), "file: %v", err)
	t.Logf("file: %v", err)

	// The stream: the file's schema as a schema message, then its first batch's message (the
	// block at offset 8: 392 bytes of metadata, a 264-byte body), then the end of the stream.
	fr, err := ipc.NewFileReader(bytes.NewReader(file))
	assert.NilError(t, err)
	var schema bytes.Buffer
	w := ipc.NewWriter(&schema, ipc.WithSchema(fr.Schema()))
	assert.NilError(t, w.Close())
	fr.Close()
	eos := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	stream := bytes.TrimSuffix(schema.Bytes(), eos)
	stream = append(append(stream, file[8:8+392+264]...), eos...)
	_, err = readStreaming(stream, StreamOptions{})
	assert.Assert(t, errors.Is(err, ErrInvalid), "stream: %v", err)
	assert.Assert(t, errors.Is(err, errStructure), "stream: %v", err)
	t.Logf("stream: %v", err)

	// As a request body reaches a write door (package wire): verified, then read batch by batch;
	// each refuses it alone.
	err = Verify(stream)
	assert.Assert(t, errors.Is(err, errStructure), "request body: %v", err)
	br, err := NewBatchReader(stream, BatchOptions{Retain: true})
	if err == nil {
		for br.Next() {
		}
		err = br.Err()
		br.Release()
	}
	assert.Assert(t, errors.Is(err, ErrInvalid), "request body: %v", err)
	assert.Assert(t, errors.Is(err, errStructure), "request body: %v", err)
}
