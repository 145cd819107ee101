package lance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

func TestManifestFileRoundTrip(t *testing.T) {
	full := func() *ManifestFile { return testManifestFile(3, fragment(0, 100, 0), fragment(1, 50, 5)) }
	tests := []struct {
		name string
		file *ManifestFile
	}{
		{"index, transaction and manifest", full()},
		{"manifest only", &ManifestFile{Manifest: full().Manifest}},
		{"transaction only", &ManifestFile{Manifest: full().Manifest, Transaction: full().Transaction}},
		{"index only", &ManifestFile{Manifest: full().Manifest, Indices: full().Indices}},
		{"empty messages", &ManifestFile{Manifest: &tablepb.Manifest{}, Indices: &tablepb.IndexSection{}, Transaction: &tablepb.Transaction{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := encode(t, tc.file)
			got, err := DecodeManifestFile(data)
			assert.NilError(t, err)
			assert.Check(t, proto.Equal(got.Manifest, tc.file.Manifest))
			assert.Check(t, proto.Equal(got.Indices, tc.file.Indices), "indices")
			assert.Check(t, proto.Equal(got.Transaction, tc.file.Transaction), "transaction")
			assert.Check(t, (got.Indices == nil) == (tc.file.Indices == nil))
			assert.Check(t, (got.Transaction == nil) == (tc.file.Transaction == nil))

			again := encode(t, got)
			assert.Check(t, is.DeepEqual(again, data), "re-encoding must be byte-identical")
		})
	}
}

// TestManifestFileLayout pins the framing against the layout Lance 8.0
// writes: index section at 0, then the transaction, then the manifest, each
// behind a u32 length, no padding, then the 16-byte footer.
func TestManifestFileLayout(t *testing.T) {
	f := testManifestFile(3, fragment(0, 100, 0))
	data := encode(t, f)

	l1 := int(binary.LittleEndian.Uint32(data[0:]))
	txnPos := 4 + l1
	l2 := int(binary.LittleEndian.Uint32(data[txnPos:]))
	manifestPos := txnPos + 4 + l2
	l3 := int(binary.LittleEndian.Uint32(data[manifestPos:]))

	assert.Equal(t, len(data), manifestPos+4+l3+16)
	assert.Equal(t, f.Manifest.GetIndexSection(), uint64(0))
	assert.Equal(t, f.Manifest.GetTransactionSection(), uint64(txnPos))
	footer := data[len(data)-16:]
	assert.Equal(t, binary.LittleEndian.Uint64(footer), uint64(manifestPos))
	assert.DeepEqual(t, footer[8:], []byte{0, 0, 2, 0, 'L', 'A', 'N', 'C'})

	// index_section = 0 is an explicit optional field: it must be on the wire.
	var sawIndexSection bool
	walkFields(t, data[manifestPos+4:manifestPos+4+l3], func(num protowire.Number, _ []byte) {
		sawIndexSection = sawIndexSection || num == 6
	})
	assert.Check(t, sawIndexSection)
}

func TestDecodeManifestFileRejects(t *testing.T) {
	good := encode(t, testManifestFile(3, fragment(0, 100, 0)))
	manifestPos := int(binary.LittleEndian.Uint64(good[len(good)-16:]))
	withFooterPos := func(pos uint64) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint64(b[len(b)-16:], pos)
		return b
	}
	withManifestLen := func(n uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[manifestPos:], n)
		return b
	}
	// withTxnSection frames a manifest whose transaction_section points at
	// `at`, preceded by an 8-byte region whose length prefix says `claimed`.
	withTxnSection := func(at uint64, claimed uint32) []byte {
		m := testManifestFile(3, fragment(0, 100, 0)).Manifest
		m.TransactionSection = proto.Uint64(at)
		body, err := proto.Marshal(m)
		assert.NilError(t, err)
		out := binary.LittleEndian.AppendUint32(nil, claimed)
		out = append(out, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		pos := len(out)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
		out = binary.LittleEndian.AppendUint64(out, uint64(pos))
		return append(out, 0, 0, 2, 0, 'L', 'A', 'N', 'C')
	}

	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"footer only", good[len(good)-16:]},
		{"bad magic", append(append([]byte(nil), good[:len(good)-4]...), "LANX"...)},
		{"manifest offset past the end", withFooterPos(uint64(len(good)))},
		{"manifest offset inside the footer", withFooterPos(uint64(len(good) - 18))},
		{"negative manifest offset", withFooterPos(1 << 63)},
		{"manifest shorter than recorded", withManifestLen(uint32(len(good)))},
		{"manifest longer than recorded", withManifestLen(1)},
		{"manifest length 4 GiB", withManifestLen(0xffffffff)},
		{"manifest is not protobuf", withManifestLen(0)},
		{"section offset past the footer", withTxnSection(1<<40, 1)},
		{"section length past the footer", withTxnSection(0, 0xfffffff0)},
		{"section is not protobuf", withTxnSection(0, 8)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeManifestFile(tc.data)
			assert.Check(t, errors.Is(err, ErrCorruptManifest), "got %v", err)
		})
	}
}

// TestUnknownFieldsSurviveRewrite: Lance releases newer than our protos add
// fields (8.0 already writes IndexMetadata field 10). A read-modify-write
// must carry them through byte for byte, at every nesting level.
func TestUnknownFieldsSurviveRewrite(t *testing.T) {
	// Manifest field 99: a future message.
	unknownTop := protowire.AppendTag(nil, 99, protowire.BytesType)
	unknownTop = protowire.AppendBytes(unknownTop, []byte("\x0a\x06future\x10\x2a"))
	// DataFragment field 50: a future varint.
	unknownFrag := protowire.AppendTag(nil, 50, protowire.VarintType)
	unknownFrag = protowire.AppendVarint(unknownFrag, 1<<40)
	// IndexMetadata field 10 = IndexFile{path=1, size_bytes=2}, as 8.0 writes.
	indexFile := protowire.AppendTag(nil, 1, protowire.BytesType)
	indexFile = protowire.AppendString(indexFile, "page_data.lance")
	indexFile = protowire.AppendTag(indexFile, 2, protowire.VarintType)
	indexFile = protowire.AppendVarint(indexFile, 4096)
	unknownIndex := protowire.AppendTag(nil, 10, protowire.BytesType)
	unknownIndex = protowire.AppendBytes(unknownIndex, indexFile)

	// Build the file by hand, [index][manifest][footer], so the input does
	// not depend on the code under test.
	f := testManifestFile(3, fragment(0, 100, 0))
	entry, err := proto.Marshal(f.Indices.Indices[0])
	assert.NilError(t, err)
	indexBody := protowire.AppendTag(nil, 1, protowire.BytesType)
	indexBody = protowire.AppendBytes(indexBody, append(entry, unknownIndex...))

	f.Manifest.Fragments[0].ProtoReflect().SetUnknown(unknownFrag)
	f.Manifest.IndexSection = proto.Uint64(0)
	manifestBody, err := proto.Marshal(f.Manifest)
	assert.NilError(t, err)
	manifestBody = append(manifestBody, unknownTop...)

	file := binary.LittleEndian.AppendUint32(nil, uint32(len(indexBody)))
	file = append(file, indexBody...)
	pos := len(file)
	file = binary.LittleEndian.AppendUint32(file, uint32(len(manifestBody)))
	file = append(file, manifestBody...)
	file = binary.LittleEndian.AppendUint64(file, uint64(pos))
	file = append(file, 0, 0, 2, 0, 'L', 'A', 'N', 'C')

	got, err := DecodeManifestFile(file)
	assert.NilError(t, err)
	// Change something, as a commit would, then rewrite and read back.
	got.Manifest.Version = 4
	got.Transaction = &tablepb.Transaction{ReadVersion: 3, Uuid: "x"}
	rewritten := encode(t, got)
	again, err := DecodeManifestFile(rewritten)
	assert.NilError(t, err)

	assert.DeepEqual(t, []byte(again.Manifest.ProtoReflect().GetUnknown()), unknownTop)
	assert.DeepEqual(t, []byte(again.Manifest.Fragments[0].ProtoReflect().GetUnknown()), unknownFrag)
	assert.DeepEqual(t, []byte(again.Indices.Indices[0].ProtoReflect().GetUnknown()), unknownIndex)

	// On the wire: field 99 of the rewritten manifest is the same bytes.
	rpos := binary.LittleEndian.Uint64(rewritten[len(rewritten)-16:])
	rlen := uint64(binary.LittleEndian.Uint32(rewritten[rpos:]))
	var found []byte
	walkFields(t, rewritten[rpos+4:rpos+4+rlen], func(num protowire.Number, raw []byte) {
		if num == 99 {
			found = raw
		}
	})
	assert.DeepEqual(t, found, unknownTop)
}

// walkFields calls fn with each top-level field's number and raw bytes
// (tag included).
func walkFields(t *testing.T, msg []byte, fn func(protowire.Number, []byte)) {
	t.Helper()
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		assert.Assert(t, n > 0, "bad tag")
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		assert.Assert(t, m >= 0, "bad field %d", num)
		fn(num, msg[:n+m])
		msg = msg[n+m:]
	}
}

func TestReadManifestFileLargerThanTailRead(t *testing.T) {
	var frags []*tablepb.DataFragment
	for i := range uint64(3000) { // ~100 KiB of manifest, > the 64 KiB tail read
		frags = append(frags, fragment(i, 1000, i%7))
	}
	f := testManifestFile(9, frags...)
	data := encode(t, f)
	assert.Assert(t, len(data) > manifestTailRead)

	store := storage.NewMemory()
	putObject(t, store, "_versions/x.manifest", data)
	for _, size := range []int64{-1, int64(len(data))} {
		t.Run(fmt.Sprintf("size %d", size), func(t *testing.T) {
			got, err := ReadManifestFile(context.Background(), store, "_versions/x.manifest", size)
			assert.NilError(t, err)
			assert.Check(t, proto.Equal(got.Manifest, f.Manifest))
			assert.Check(t, proto.Equal(got.Indices, f.Indices))
			assert.Check(t, proto.Equal(got.Transaction, f.Transaction))
		})
	}
}
