package namespace

import (
	"context"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// TestReservedUnder: the server's own places (control root, warehouse root, catalog root) become
// reserved paths of the roots they lie inside, whatever form the URIs take; places beside, around
// or equal to a root reserve nothing in it.
func TestReservedUnder(t *testing.T) {
	cases := []struct {
		root string
		uris []string
		want []string
	}{
		{"/data/cat", []string{"/data/cat", "/data/cat/_lancecat"}, []string{"_lancecat"}},
		{"/data/cat", []string{"/data/ctl", "/data/cat-warehouses", "/data"}, nil},
		{"/data/cat/", []string{"/data/cat/wh/base/", "file:///data/cat/ctl"}, []string{"wh/base", "ctl"}},
		{"file:///data/cat", []string{"/data/cat/_lancecat"}, []string{"_lancecat"}},
		{"/data/wh/w1", []string{"/data/wh/w1/inner", "/data/wh"}, []string{"inner"}},
		{"s3://bucket/prefix", []string{"s3://bucket/prefix/_lancecat", "s3://bucket/other", "s3://other/prefix/x"}, []string{"_lancecat"}},
		{"s3://bucket", []string{"s3://bucket/_lancecat", "s3://bucket"}, []string{"_lancecat"}},
		{"", []string{"/x"}, nil},
	}
	for _, c := range cases {
		assert.DeepEqual(t, ReservedUnder(c.root, c.uris...), c.want)
	}
}

// TestLocationsReservedByOptions: paths the server reserves under a root (a control root
// configured elsewhere, a warehouse root inside the catalog root) are refused like the built-in
// ones — at them, inside them and around them — by every door and by the purge.
func TestLocationsReservedByOptions(t *testing.T) {
	ctx := context.Background()
	b, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	n := New(b, Options{RootURI: "/root", Reserved: []string{"ctl", "wh/base/", "../ignored", "."}})
	_, err = n.CreateNamespace(ctx, ident.ID{"ns1"}, nil, "")
	assert.NilError(t, err)
	put(t, b, "wh/base/w1/__manifest/x", "x")
	put(t, b, "ctl/_apikeys/k", "x")

	for _, door := range locationDoors {
		for i, loc := range []string{"ctl", "ctl/_apikeys", "/root/ctl", "wh", "wh/base", "wh/base/w1", "wh/base/w1/t"} {
			t.Run(fmt.Sprintf("%s/%q", door.name, loc), func(t *testing.T) {
				before := keys(t, b)
				err := door.call(ctx, n, ident.ID{"ns1", fmt.Sprintf("x%d", i)}, loc)
				assert.ErrorIs(t, err, nserr.ErrInvalidInput)
				assert.ErrorIs(t, err, ErrLocationReserved)
				assert.DeepEqual(t, keys(t, b), before)
			})
		}
	}
	// Beside the reserved paths is the table area.
	for i, loc := range []string{"ctl2", "wh2/t", "wh/other"} {
		_, err := n.DeclareTable(ctx, ident.ID{"ns1", fmt.Sprintf("ok%d", i)}, loc, nil)
		assert.NilError(t, err, loc)
	}

	// The purge's delete passes the same gate.
	for _, loc := range []string{"", ".", "ctl", "wh", "wh/base/w1", "_lancecat", "__manifest", "../x", "/abs"} {
		before := keys(t, b)
		_, err := n.DeleteLocation(ctx, loc)
		assert.ErrorIs(t, err, nserr.ErrInvalidInput, loc)
		assert.DeepEqual(t, keys(t, b), before)
	}
}
