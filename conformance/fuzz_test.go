package conformance

import (
	"bytes"
	"net/http"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// ipcFile is rows 0..2 as an Arrow IPC file (the format query answers in).
func ipcFile(tb testing.TB) []byte {
	r, err := ipc.NewReader(bytes.NewReader(rows(0, 3)))
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(r.Schema()))
	if err != nil {
		tb.Fatal(err)
	}
	for r.Next() {
		if err := w.Write(r.RecordBatch()); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadIDs: a stream and a file answer read the same ids.
func TestReadIDs(t *testing.T) {
	for _, body := range [][]byte{rows(0, 3), ipcFile(t)} {
		got, err := readIDs(body)
		if err != nil || !slices.Equal(got, seq(0, 3)) {
			t.Fatalf("readIDs: %v, %v", got, err)
		}
	}
}

// FuzzReadIDs: any answer body, however malformed, is an error or a list of ids, never a panic
// (a server's answer is untrusted input to the suite).
func FuzzReadIDs(f *testing.F) {
	f.Add(rows(0, 3))
	f.Add(rows(5, 0))
	f.Add(vectorRows(2))
	f.Add(ipcFile(f))
	f.Add([]byte("ARROW1\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = readIDs(body)
	})
}

// FuzzFails: any error body decodes to a verdict without a panic, and a verdict of "is code c"
// means the body held c with c's status.
func FuzzFails(f *testing.F) {
	f.Add(404, []byte(`{"code":4,"error":"table not found"}`), 4)
	f.Add(406, []byte(`{"code":0}`), 0)
	f.Add(500, []byte(`not json`), 18)
	f.Add(409, []byte(`{"code":"5"}`), 5)
	f.Fuzz(func(t *testing.T, status int, body []byte, code int) {
		a := answer{status: status, body: body, header: http.Header{"Content-Type": {"application/problem+json"}}}
		if fails(a, code) == nil && specStatus[code] != status {
			t.Fatalf("code %d accepted with status %d", code, status)
		}
	})
}
