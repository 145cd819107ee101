package namespace

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// FuzzTransactionRecord: whatever bytes sit where a transaction record or a claim is read (a
// torn or foreign object), describe, alter and a reader's settle answer an error or a result,
// never a panic, and a refused alter leaves the bytes as they were.
func FuzzTransactionRecord(f *testing.F) {
	f.Add([]byte(`{"name":"x","namespace":["ns"],"status":"Running","entries":[{"table":["ns","t"],"location":"t","version":1}]}`), []byte(`{"txn":"x"}`))
	f.Add([]byte(`{"status":"Succeeded","entries":[{"version":18446744073709551615}]}`), []byte(`{}`))
	f.Add([]byte(`null`), []byte(`[]`))
	f.Add([]byte(`{"namespace":null,"properties":{"lancecat.kind":"x"}}`), []byte(`{"txn":"../../x"}`))
	f.Fuzz(func(t *testing.T, record, claimBody []byte) {
		ctx := context.Background()
		b := storage.NewMemory()
		n := New(b, Options{RootURI: "memory://root"})
		name := "txn-" + uuid.NewString()
		if _, err := b.Put(ctx, recordKey(name), bytes.NewReader(record), int64(len(record))); err != nil {
			t.Fatal(err)
		}
		tbl := &catalog.Entry{ID: ident.ID{"ns", "t"}, Location: "t", URI: "memory://root/t"}
		if _, err := b.Put(ctx, claimKey("t", "", 1), bytes.NewReader(claimBody), int64(len(claimBody))); err != nil {
			t.Fatal(err)
		}
		id := ident.ID{"ns", name}
		_, _ = n.DescribeTransaction(ctx, id)
		key := "k"
		_, err := n.AlterTransaction(ctx, id, []catalog.TransactionAction{{Set: &catalog.PropertySet{Key: key, Value: "v", Mode: "fail"}}, {Unset: &catalog.PropertyUnset{Key: "nope", Mode: "fail"}}})
		if err == nil {
			t.Fatal("an alter with a failing action applied")
		}
		rc, _, gerr := b.Get(ctx, recordKey(name))
		if gerr != nil {
			t.Fatal(gerr)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(rc)
		rc.Close()
		if !bytes.Equal(buf.Bytes(), record) {
			t.Fatal("a refused alter changed the record")
		}
		_, _ = n.settle(ctx, &entry{Entry: tbl, inManifest: true}, "", 0)
	})
}
