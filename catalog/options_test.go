package catalog_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []catalog.Option
		want catalog.Options
	}{
		{"none", nil, catalog.Options{}},
		{"force", []catalog.Option{catalog.WithForce()}, catalog.Options{Force: true}},
		{"purge", []catalog.Option{catalog.WithPurge()}, catalog.Options{Purge: true}},
		{"both, a nil skipped", []catalog.Option{catalog.WithPurge(), nil, catalog.WithForce()}, catalog.Options{Force: true, Purge: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, catalog.Resolve(tc.opts...), tc.want)
		})
	}
}
