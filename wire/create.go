package wire

import (
	"encoding/json"
	"net/http"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// NewTable is the table a create_table request asks for, its rows aside (they are the Arrow
// body): the mode of its query (already canonical), and the location and properties, which a
// remote-mode client sends as headers (x-lance-table-location, x-lance-table-properties; the
// query's properties win).
func NewTable(params *nsapi.CreateTableParams, header http.Header) (catalog.NewTable, error) {
	nt := catalog.NewTable{Mode: strOf(params.Mode), Location: header.Get("x-lance-table-location")}
	props := strOf(params.Properties)
	if props == "" {
		props = header.Get("x-lance-table-properties")
	}
	if props != "" {
		if err := json.Unmarshal([]byte(props), &nt.Properties); err != nil {
			return nt, nserr.InvalidInputf("properties must be a JSON object of strings: %v", err)
		}
	}
	return nt, nil
}
