package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// remoteServer is lancecat over a local root, with the catalog backing every door.
func remoteServer(t *testing.T) http.Handler {
	t.Helper()
	dir := t.TempDir()
	b, err := storage.NewFS(dir)
	assert.NilError(t, err)
	srv, err := New(Options{Handlers: handlers.New(handlers.Options{Catalog: namespace.New(b, namespace.Options{RootURI: dir})})})
	assert.NilError(t, err)
	return srv.Handler()
}

// send is one request as a remote-mode client sends it: a raw body (nil: none at all, no
// content type), the client's user agent only when agent is set.
func send(t *testing.T, h http.Handler, method, target, contentType string, body []byte) (int, []byte) {
	t.Helper()
	var req *http.Request
	if body == nil {
		req = httptest.NewRequest(method, target, nil)
	} else {
		req = httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestRemoteWire pins the LanceDB remote-mode dialect (lancedb-remote-client.md §5.2) where it
// differs from the spec's: trailing-slash routes and the root table list, body-less requests,
// LZ4-compressed Arrow bodies, "already exists" as 400, the bare tag map, Debug-quoted enums,
// versions with an RFC 3339 timestamp and metadata, rename's new_namespace; and that a spec
// request to the same route still gets the spec's answer.
func TestRemoteWire(t *testing.T) {
	h := remoteServer(t)
	const arrowType = "application/vnd.apache.arrow.stream"

	// createTable: chunked LZ4 IPC stream, mode in the query, a trailing slash.
	st, body := send(t, h, "POST", "/v1/table/items/create/?mode=create", arrowType, lz4Stream(t, 1, 2, 3))
	assert.Equal(t, st, http.StatusOK, "%s", body)
	st, body = send(t, h, "POST", "/v1/table/other/create/", arrowType, lz4Stream(t))
	assert.Equal(t, st, http.StatusOK, "%s", body)

	t.Run("exists is 400 with already exists for remote, 409 for spec clients", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/table/items/create/?mode=create", arrowType, lz4Stream(t, 9))
		assert.Equal(t, st, http.StatusBadRequest, "%s", body)
		assert.Assert(t, strings.Contains(string(body), "Table 'items' already exists"), "%s", body)
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(body, &p))
		assert.Equal(t, p.Code, int(nserr.TableAlreadyExists))
		st, _ = send(t, h, "POST", "/v1/table/items/create?mode=create", arrowType, lz4Stream(t, 9))
		assert.Equal(t, st, http.StatusConflict)
		st, body = send(t, h, "POST", "/v1/table/items/create/?mode=exist_ok", arrowType, lz4Stream(t, 9))
		assert.Equal(t, st, http.StatusOK, "%s", body)
	})

	t.Run("root table list with a trailing slash and paging by the last name seen", func(t *testing.T) {
		st, body := send(t, h, "GET", "/v1/table/", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		var out struct{ Tables []string }
		assert.NilError(t, json.Unmarshal(body, &out))
		assert.DeepEqual(t, out.Tables, []string{"items", "other"})
		st, body = send(t, h, "GET", "/v1/table/?limit=1&page_token=items", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		assert.NilError(t, json.Unmarshal(body, &out))
		assert.DeepEqual(t, out.Tables, []string{"other"})
	})

	t.Run("describe without a body has version and schema", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/table/items/describe/", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		var out struct {
			Version *int64
			Schema  *struct{ Fields []struct{ Name string } }
		}
		assert.NilError(t, json.Unmarshal(body, &out))
		assert.Assert(t, out.Version != nil && *out.Version == 1, "%s", body)
		assert.Assert(t, out.Schema != nil && len(out.Schema.Fields) == 1 && out.Schema.Fields[0].Name == "id", "%s", body)
		st, _ = send(t, h, "POST", "/v1/table/items/describe/", "application/json", []byte(`{"version":7}`))
		assert.Equal(t, st, http.StatusNotFound)
	})

	t.Run("tags: a bare map for remote, wrapped for spec clients", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/table/items/tags/create/", "application/json", []byte(`{"tag":"v1","version":1}`))
		assert.Equal(t, st, http.StatusOK, "%s", body)
		st, body = send(t, h, "POST", "/v1/table/items/tags/list/", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		var bare map[string]struct {
			Version      int64
			ManifestSize *int64 `json:"manifestSize"`
		}
		assert.NilError(t, json.Unmarshal(body, &bare))
		assert.Equal(t, bare["v1"].Version, int64(1), "%s", body)
		assert.Assert(t, bare["v1"].ManifestSize != nil, "%s", body)
		st, body = send(t, h, "POST", "/v1/table/items/tags/list", "application/json", []byte(`{"id":["items"]}`))
		assert.Equal(t, st, http.StatusOK, "%s", body)
		var wrapped struct {
			Tags map[string]struct{ Version int64 }
		}
		assert.NilError(t, json.Unmarshal(body, &wrapped))
		assert.Equal(t, wrapped.Tags["v1"].Version, int64(1), "%s", body)
	})

	t.Run("versions without a body carry an RFC 3339 timestamp and metadata", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/table/items/version/list/", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		var out struct {
			Versions []struct {
				Version         int64
				Timestamp       string
				TimestampMillis int64 `json:"timestamp_millis"`
				Metadata        *map[string]string
			}
		}
		assert.NilError(t, json.Unmarshal(body, &out))
		assert.Equal(t, len(out.Versions), 1, "%s", body)
		v := out.Versions[0]
		ts, err := time.Parse(time.RFC3339, v.Timestamp)
		assert.NilError(t, err, "%s", body)
		assert.Equal(t, ts.UnixMilli(), v.TimestampMillis)
		assert.Assert(t, v.Metadata != nil, "metadata is required by 0.31: %s", body)
	})

	t.Run("namespace enums in Rust's Debug form", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/namespace/ns1/create", "application/json", []byte(`{"mode":"\"Create\""}`))
		assert.Equal(t, st, http.StatusOK, "%s", body)
		st, body = send(t, h, "POST", "/v1/namespace/ns1/create", "application/json", []byte(`{"mode":"\"ExistOk\""}`))
		assert.Equal(t, st, http.StatusOK, "%s", body)
	})

	t.Run("rename into another namespace with new_namespace", func(t *testing.T) {
		st, body := send(t, h, "POST", "/v1/table/other/rename/", "application/json", []byte(`{"new_table_name":"moved","new_namespace":["ns1"]}`))
		assert.Equal(t, st, http.StatusOK, "%s", body)
		st, body = send(t, h, "POST", "/v1/table/ns1$moved/describe/", "", nil)
		assert.Equal(t, st, http.StatusOK, "%s", body)
		st, _ = send(t, h, "POST", "/v1/table/moved/describe/", "", nil)
		assert.Equal(t, st, http.StatusNotFound)
	})

	t.Run("table routes answer 404 for a missing table, merge_insert included", func(t *testing.T) {
		// Each with a body the remote client sends it (a field the door does not know is a 400).
		for route, req := range map[string]string{
			"describe/": `{"version":null}`, "count_rows/": `{"predicate":"id > 0","version":null}`,
			"query/": `{"k":1,"vector":[],"prefilter":true,"version":null}`, "version/list/": ``, "tags/list/": ``,
			"stats/": ``, "update/": `{"predicate":"id > 0","updates":[["id","1"]]}`, "delete/": `{"predicate":"id > 0"}`,
		} {
			st, body := send(t, h, "POST", "/v1/table/nope/"+route, "application/json", []byte(req))
			assert.Equal(t, st, http.StatusNotFound, "%s: %s", route, body)
		}
		for _, route := range []string{"merge_insert/?on=id&when_not_matched_insert_all=true", "insert/"} {
			st, body := send(t, h, "POST", "/v1/table/nope/"+route, arrowType, lz4Stream(t, 1))
			assert.Equal(t, st, http.StatusNotFound, "%s: %s", route, body)
		}
	})
}

// vecStream is an Arrow IPC stream of (id, v float32[dim]) rows, uncompressed.
func vecStream(t *testing.T, dim int32, ids ...int64) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	vb := bld.Field(1).(*array.FixedSizeListBuilder)
	for _, id := range ids {
		bld.Field(0).(*array.Int64Builder).Append(id)
		vb.Append(true)
		for j := range dim {
			vb.ValueBuilder().(*array.Float32Builder).Append(float32(id) + float32(j))
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// TestDataDoorsBadInput: malformed filters, unknown columns, type mismatches, a body that is not
// Arrow, a vector of the wrong dimension, duplicate merge keys, a missing version: each a clear
// 400 or 404 with the spec code, and nothing written. The good answers carry the version they
// read (x-lancedb-version) and a query answers an Arrow IPC file.
func TestDataDoorsBadInput(t *testing.T) {
	h := remoteServer(t)
	const arrowType = "application/vnd.apache.arrow.stream"
	st, body := send(t, h, "POST", "/v1/table/vt/create", arrowType, vecStream(t, 4, 1, 2, 3))
	assert.Equal(t, st, http.StatusOK, "%s", body)
	version := func() string {
		req := httptest.NewRequest("POST", "/v1/table/vt/count_rows", strings.NewReader(`{}`))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, rec.Code, http.StatusOK, rec.Body.String())
		assert.Equal(t, rec.Body.String(), "3")
		return rec.Header().Get("x-lancedb-version")
	}
	assert.Equal(t, version(), "1")

	for _, tc := range []struct {
		name, route, contentType, body string
		status, code                   int
	}{
		{"malformed filter", "query", "application/json", `{"k":10,"filter":"id >"}`, 400, 13},
		{"unknown column in a filter", "count_rows", "application/json", `{"predicate":"nope = 1"}`, 400, 13},
		{"unknown column selected", "query", "application/json", `{"k":10,"columns":["nope"]}`, 400, 13},
		{"type mismatch", "query", "application/json", `{"k":10,"filter":"id = 'x' + 1"}`, 400, 13},
		{"vector of the wrong dimension", "query", "application/json", `{"k":1,"vector":[1,2]}`, 400, 13},
		{"missing version", "query", "application/json", `{"k":1,"version":42}`, 404, 11},
		{"missing version count", "count_rows", "application/json", `{"version":42}`, 404, 11},
		{"not Arrow", "insert", arrowType, `{"rows":[1]}`, 400, 13},
		{"empty insert body", "insert", arrowType, ``, 400, 13},
		{"wrong schema", "insert", arrowType, string(lz4Stream(t, 7)), 400, 20},
		{"bad delete predicate", "delete", "application/json", `{"predicate":"id >"}`, 400, 13},
		{"bad update value", "update", "application/json", `{"updates":[["id","nope + 1"]]}`, 400, 13},
		{"update of an unknown column", "update", "application/json", `{"updates":[["nope","1"]]}`, 400, 13},
		{"duplicate merge source keys", "merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true", arrowType,
			string(vecStream(t, 4, 9, 9)), 400, 13},
		{"merge on an unknown column", "merge_insert?on=nope&when_not_matched_insert_all=true", arrowType, string(vecStream(t, 4, 9)), 400, 13},
		{"add a column from a bad expression", "add_columns", "application/json", `{"new_columns":[{"name":"x","expression":"nope * 2"}]}`, 400, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b []byte
			if tc.body != "" {
				b = []byte(tc.body)
			}
			st, body := send(t, h, "POST", "/v1/table/vt/"+tc.route, tc.contentType, b)
			assert.Equal(t, st, tc.status, "%s", body)
			var p nserr.Problem
			assert.NilError(t, json.Unmarshal(body, &p), "%s", body)
			assert.Equal(t, p.Code, tc.code, "%s", body)
			assert.Equal(t, version(), "1", "nothing written")
		})
	}

	// A good query: an Arrow IPC file with the version it read.
	req := httptest.NewRequest("POST", "/v1/table/vt/query/", strings.NewReader(`{"k":2,"vector":[1,2,3,4],"columns":["id"]}`))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, rec.Code, http.StatusOK, rec.Body.String())
	assert.Equal(t, rec.Header().Get("Content-Type"), "application/vnd.apache.arrow.file")
	assert.Equal(t, rec.Header().Get("x-lancedb-version"), "1")
	f, err := ipc.NewFileReader(bytes.NewReader(rec.Body.Bytes()))
	assert.NilError(t, err)
	defer f.Close()
	assert.Equal(t, f.Schema().NumFields(), 2, "id and _distance: %v", f.Schema())
	assert.Equal(t, f.Schema().Field(1).Name, "_distance")
	got, err := f.RecordBatch(0)
	assert.NilError(t, err)
	assert.DeepEqual(t, got.Column(0).(*array.Int64).Int64Values(), []int64{1, 2})
}

// TestConcurrentWritesOverHTTP: 8 clients append, merge and delete at once through the REST doors,
// retrying what the SDK retries (409, 429, 5xx); every acknowledged write is in the table exactly
// once: nothing lost, nothing duplicated.
func TestConcurrentWritesOverHTTP(t *testing.T) {
	h := remoteServer(t)
	const arrowType = "application/vnd.apache.arrow.stream"
	st, body := send(t, h, "POST", "/v1/table/c/create", arrowType, lz4Stream(t, -1))
	assert.Equal(t, st, http.StatusOK, "%s", body)
	retry := func(method, target, contentType string, b []byte) (int, []byte) {
		for attempt := 0; ; attempt++ {
			st, body := send(t, h, method, target, contentType, b)
			if (st == 409 || st == 429 || st >= 500) && attempt < 20 {
				time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
				continue
			}
			return st, body
		}
	}
	const writers, rounds = 8, 4
	errs := make(chan error, writers*rounds*3)
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for r := range rounds {
				base := int64(w*1000 + r*10)
				// Append base..base+4, upsert base+5..base+9 (all new), delete base+4.
				if st, body := retry("POST", "/v1/table/c/insert/", arrowType, lz4Stream(t, base, base+1, base+2, base+3, base+4)); st != 200 {
					errs <- fmt.Errorf("insert: %d %s", st, body)
				}
				if st, body := retry("POST", "/v1/table/c/merge_insert/?on=id&when_matched_update_all=true&when_not_matched_insert_all=true", arrowType,
					lz4Stream(t, base+5, base+6, base+7, base+8, base+9)); st != 200 {
					errs <- fmt.Errorf("merge: %d %s", st, body)
				}
				if st, body := retry("POST", "/v1/table/c/delete/", "application/json", fmt.Appendf(nil, `{"predicate":"id = %d"}`, base+4)); st != 200 {
					errs <- fmt.Errorf("delete: %d %s", st, body)
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, body = send(t, h, "POST", "/v1/table/c/count_rows/", "application/json", []byte(`{}`))
	assert.Equal(t, st, http.StatusOK, "%s", body)
	assert.Equal(t, string(body), fmt.Sprint(1+writers*rounds*9), "every acknowledged row once")
	st, body = send(t, h, "POST", "/v1/table/c/count_rows/", "application/json", []byte(`{"predicate":"id % 10 = 4"}`))
	assert.Equal(t, st, http.StatusOK, "%s", body)
	assert.Equal(t, string(body), "0", "every deleted row is gone")
}
