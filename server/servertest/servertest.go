// Package servertest holds the test helpers the HTTP server's tests (server/) and the composition
// root's (app/) share, so each is written once: a log buffer safe for concurrent writers, the
// reading of its JSON lines, the problem check of an answer, and an LZ4-compressed Arrow body as
// the LanceDB remote client sends one.
package servertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// SyncBuffer is a bytes.Buffer a logger and its reader may share across goroutines.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// LogLines are the JSON lines written to logs, decoded.
func LogLines(t *testing.T, logs *SyncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		assert.NilError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// AccessLine is the access log line of the request rid.
func AccessLine(t *testing.T, logs *SyncBuffer, rid string) map[string]any {
	t.Helper()
	for _, l := range LogLines(t, logs) {
		if l["msg"] == "request" && l["request_id"] == rid {
			return l
		}
	}
	t.Fatalf("no access line for %s in %s", rid, logs.String())
	return nil
}

// Expect asserts a response's status and, for errors, its problem code.
func Expect(t *testing.T, status int, body []byte, wantStatus int, wantCode nserr.Code, contains ...string) {
	t.Helper()
	assert.Equal(t, status, wantStatus, string(body))
	if wantStatus >= 400 {
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(body, &p), string(body))
		assert.Equal(t, p.Code, int(wantCode), string(body))
	}
	for _, s := range contains {
		assert.Assert(t, strings.Contains(string(body), s), "%q not in %s", s, body)
	}
}

// LZ4Stream is an Arrow IPC stream of rows ids, LZ4_FRAME-compressed as the LanceDB remote client
// sends its create and insert bodies.
func LZ4Stream(t *testing.T, ids ...int64) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithLZ4())
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}
