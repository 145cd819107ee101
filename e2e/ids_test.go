package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
)

// TestRefusedIDsOverHTTP: the repro over HTTP. Ids a store cannot hold in a table
// directory's name (control characters, a 255-byte part that overflows the name with its hash
// prefix), invisible characters and non-NFC spellings, and a 5000-character tag name, are 400
// code 13 at every door that creates, and nothing is listed or written afterwards. They used to
// answer 500 code 18 after committing a row: listed, describe 500, drop 500, re-create 409.
func TestRefusedIDsOverHTTP(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = filepath.Join(t.TempDir(), "root")
	base := serve(t, cfg)
	ctx := context.Background()
	post := func(path, contentType string, body []byte) answer {
		t.Helper()
		a, err := call(ctx, base, "POST", path, contentType, body)
		assert.NilError(t, err)
		return a
	}
	assert.Equal(t, post("/v1/namespace/ns1/create", "application/json", []byte(`{}`)).status, http.StatusOK)

	arrow := arrowBody(t)
	assert.Equal(t, post(tablePath("ns1$t", "create"), "application/vnd.apache.arrow.stream", arrow).status, http.StatusOK)
	for _, name := range []string{"q\nq", "q\rq", "q\tq", "q\x01q", "q\x7fq", strings.Repeat("x", 255),
		"caf\u200Be", "\uFEFFt", "cafe\u0301"} {
		id := "ns1$" + name
		for _, door := range []struct {
			action, contentType string
			body                []byte
		}{
			{"create", "application/vnd.apache.arrow.stream", arrow},
			{"declare", "application/json", []byte(`{}`)},
			{"register", "application/json", []byte(`{"location":"somewhere"}`)},
		} {
			a := post(tablePath(id, door.action), door.contentType, door.body)
			assert.Check(t, a.status == http.StatusBadRequest && a.code == 13, "%s %+q: %d %s", door.action, name, a.status, a.body)
		}
		a := post("/v1/namespace/"+url.QueryEscape(name)+"/create", "application/json", []byte(`{}`))
		assert.Check(t, a.status == http.StatusBadRequest && a.code == 13, "namespace %+q: %d %s", name, a.status, a.body)
		a = post(tablePath("ns1$t", "rename"), "application/json", []byte(`{"new_table_name":`+jsonString(name)+`}`))
		assert.Check(t, a.status == http.StatusBadRequest && a.code == 13, "rename to %+q: %d %s", name, a.status, a.body)
	}
	a, err := call(ctx, base, "GET", "/v1/namespace/ns1/table/list", "", nil)
	assert.NilError(t, err)
	assert.Equal(t, strings.TrimSpace(string(a.body)), `{"tables":["t"]}`)
	entries, err := os.ReadDir(cfg.Root)
	assert.NilError(t, err)
	for _, e := range entries {
		assert.Check(t, e.Name() == "__manifest" || strings.HasPrefix(e.Name(), ".") || e.Name() == "_lancecat" || strings.HasSuffix(e.Name(), "_ns1$t"), "written: %s", e.Name())
	}

	// A 5000-character tag name on a real table.
	tag := strings.Repeat("t", 5000)
	a = post(tablePath("ns1$t", "tags/create"), "application/json", []byte(`{"tag":"`+tag+`","version":1}`))
	assert.Check(t, a.status == http.StatusBadRequest && a.code == 13, "tag create: %d %s", a.status, a.body)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
