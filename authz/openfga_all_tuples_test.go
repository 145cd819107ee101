package authz_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
)

// TestParseObject: the drift scan reads objects back from raw tuples, as object or as user
// (a userset "type:id#relation" names its object); wildcards, unknown types and malformed
// strings name nothing.
func TestParseObject(t *testing.T) {
	tbl := authz.TableObject(ident.ID{"a", "b c"})
	for _, tc := range []struct {
		in   string
		want authz.Object
		ok   bool
	}{
		{tbl.String(), tbl, true},
		{"namespace:a$b#member", authz.NamespaceObject(ident.ID{"a", "b"}), true},
		{"warehouse:w1", authz.WarehouseObject("w1"), true},
		{"user:*", authz.Object{}, false},
		{"bogus:x", authz.Object{}, false},
		{"table:", authz.Object{}, false},
		{"table", authz.Object{}, false},
	} {
		got, ok := authz.ParseObject(tc.in)
		assert.Equal(t, ok, tc.ok, tc.in)
		assert.Equal(t, got, tc.want, tc.in)
	}
}

// FuzzParseObject: whatever ParseObject accepts is a valid object that spells back as its
// input (less any userset relation).
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{"table:a$b", "namespace:~YQBi#member", "user:*", "project:p", ":", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, ok := authz.ParseObject(s)
		if !ok {
			return
		}
		assert.NilError(t, o.Validate())
		base, _, _ := strings.Cut(s, "#")
		assert.Equal(t, o.String(), base)
	})
}
