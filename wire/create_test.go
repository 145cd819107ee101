package wire

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// TestNewTable: create_table's mode, location and properties, from the query or, as a remote
// client sends them, from headers (the query's properties win); properties that are not a JSON
// object of strings are refused.
func TestNewTable(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		params nsapi.CreateTableParams
		header http.Header
		want   catalog.NewTable
		bad    bool
	}{
		{"nothing", nsapi.CreateTableParams{}, hdr(), catalog.NewTable{}, false},
		{"query", nsapi.CreateTableParams{Mode: ptr(catalog.ModeExistOk), Properties: ptr(`{"a":"1"}`)}, hdr(),
			catalog.NewTable{Mode: catalog.ModeExistOk, Properties: map[string]string{"a": "1"}}, false},
		{"remote headers", nsapi.CreateTableParams{}, hdr("x-lance-table-location", "s3://b/t", "x-lance-table-properties", `{"b":"2"}`),
			catalog.NewTable{Location: "s3://b/t", Properties: map[string]string{"b": "2"}}, false},
		{"the query's properties win", nsapi.CreateTableParams{Properties: ptr(`{"a":"1"}`)}, hdr("x-lance-table-properties", `{"b":"2"}`),
			catalog.NewTable{Properties: map[string]string{"a": "1"}}, false},
		{"not an object", nsapi.CreateTableParams{Properties: ptr(`["a"]`)}, hdr(), catalog.NewTable{}, true},
		{"not strings", nsapi.CreateTableParams{}, hdr("x-lance-table-properties", `{"a":1}`), catalog.NewTable{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewTable(&tc.params, tc.header)
			if tc.bad {
				assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}
