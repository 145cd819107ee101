package table

import (
	"context"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestIndexTypesMatchCreateIndex: IndexTypes (what GET /v1/capabilities reports) is exactly what
// CreateIndex builds: a listed type is never refused as unsupported or unknown, and every vector
// or full-text type not listed answers 406. When the vector or full-text work lands a type, this
// fails until builtIndexTypes lists it (the capabilities cannot lag behind the door).
func TestIndexTypesMatchCreateIndex(t *testing.T) {
	ctx := context.Background()
	h := oneRowTable(t)
	listed := IndexTypes()
	assert.Check(t, slices.Contains(listed, "BTREE") && slices.Contains(listed, "BITMAP") && slices.Contains(listed, "LABEL_LIST"), "%v", listed)

	var all []string
	all = append(all, scalarCandidates...)
	for k := range vectorIndexTypes {
		all = append(all, k)
	}
	for k := range ftsIndexTypes {
		all = append(all, k)
	}
	for _, typ := range all {
		_, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: typ, Name: "i_" + typ, Replace: true})
		code := nserr.CodeOf(err)
		switch {
		case slices.Contains(listed, typ):
			assert.Check(t, code != nserr.Unsupported, "%s is listed but CreateIndex answers %v", typ, err)
			if err != nil {
				assert.Check(t, !isUnknownType(err), "%s is listed but CreateIndex does not know it: %v", typ, err)
			}
		case vectorIndexTypes[typ] || ftsIndexTypes[typ]:
			assert.Check(t, code == nserr.Unsupported, "%s is not listed but CreateIndex answers %v: add it to builtIndexTypes", typ, err)
		default:
			assert.Check(t, isUnknownType(err), "%s is not listed: %v", typ, err)
		}
	}
}

func isUnknownType(err error) bool {
	return nserr.CodeOf(err) == nserr.InvalidInput && err != nil && strings.Contains(err.Error(), "unknown index type")
}
