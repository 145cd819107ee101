package guards

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// fakeRecords are protection and trash records by "kind:id"; calls records what was asked.
type fakeRecords struct {
	protected, trashed map[string]bool
	calls              []string
}

func (f *fakeRecords) CheckNotProtected(_ context.Context, kind string, id ident.ID, force bool) error {
	f.calls = append(f.calls, "protected "+kind+":"+id.Join("$"))
	if f.protected[kind+":"+id.Join("$")] && !force {
		return nserr.ConcurrentModificationf("%s %s is protected", kind, id.Join("$"))
	}
	return nil
}

func (f *fakeRecords) CheckSubtreeNotProtected(_ context.Context, ns ident.ID, force bool) error {
	f.calls = append(f.calls, "subtree "+ns.Join("$"))
	for k := range f.protected {
		if !force && (k == "namespace:"+ns.Join("$") || len(k) > len("table:"+ns.Join("$")+"$") && k[:len("table:"+ns.Join("$")+"$")] == "table:"+ns.Join("$")+"$") {
			return nserr.ConcurrentModificationf("%s is protected", k)
		}
	}
	return nil
}

func (f *fakeRecords) CheckNotTrashed(_ context.Context, id ident.ID) error {
	f.calls = append(f.calls, "trash table:"+id.Join("$"))
	if f.trashed["table:"+id.Join("$")] {
		return nserr.ConcurrentModificationf("table %s is in the trash", id.Join("$"))
	}
	return nil
}

func (f *fakeRecords) CheckNamespaceNotTrashed(_ context.Context, id ident.ID) error {
	f.calls = append(f.calls, "trash namespace:"+id.Join("$"))
	if f.trashed["namespace:"+id.Join("$")] {
		return nserr.ConcurrentModificationf("namespace %s is in the trash", id.Join("$"))
	}
	return nil
}

func TestConflictGuards(t *testing.T) {
	ctx := context.Background()
	T, N := registry.KindTable, registry.KindNamespace
	tbl, ns := ident.ID{"ns", "t"}, ident.ID{"ns"}
	cases := []struct {
		name      string
		protected []string
		trashed   []string
		run       func(f *fakeRecords) error
		refused   bool
		asked     []string
	}{
		{"drop of a protected table", []string{"table:ns$t"}, nil,
			func(f *fakeRecords) error { return NotProtected(ctx, f, T, tbl, false) }, true, []string{"protected table:ns$t"}},
		{"force overrides protection", []string{"table:ns$t"}, nil,
			func(f *fakeRecords) error { return NotProtected(ctx, f, T, tbl, true) }, false, []string{"protected table:ns$t"}},
		{"a table of the root namespace holds records like any other", []string{"table:t"}, nil,
			func(f *fakeRecords) error { return NotProtected(ctx, f, T, ident.ID{"t"}, false) }, true, []string{"protected table:t"}},
		{"the root holds no records", nil, nil,
			func(f *fakeRecords) error { return NotProtected(ctx, f, N, ident.ID{}, false) }, false, nil},
		{"overwrite of a protected table", []string{"table:ns$t"}, nil,
			func(f *fakeRecords) error { return Overwrite(ctx, f, T, tbl, catalog.ModeOverwrite, false) }, true, []string{"protected table:ns$t"}},
		{"create and exist-ok replace nothing", []string{"table:ns$t"}, nil, func(f *fakeRecords) error {
			if err := Overwrite(ctx, f, T, tbl, catalog.ModeCreate, false); err != nil {
				return err
			}
			return Overwrite(ctx, f, T, tbl, catalog.ModeExistOk, false)
		}, false, nil},
		{"restrict drop asks about the namespace alone", []string{"table:ns$t"}, nil,
			func(f *fakeRecords) error { return NamespaceDrop(ctx, f, ns, false, false) }, false, []string{"protected namespace:ns"}},
		{"cascade drop asks about the subtree", []string{"table:ns$t"}, nil,
			func(f *fakeRecords) error { return NamespaceDrop(ctx, f, ns, true, false) }, true, []string{"subtree ns"}},
		{"create at a trashed table id", nil, []string{"table:ns$t"},
			func(f *fakeRecords) error { return NotTrashed(ctx, f, tbl) }, true, []string{"trash table:ns$t"}},
		{"create in a trashed namespace", nil, []string{"namespace:ns"},
			func(f *fakeRecords) error { return NotTrashed(ctx, f, tbl) }, true, []string{"trash table:ns$t", "trash namespace:ns"}},
		{"namespace create at a trashed id", nil, []string{"namespace:ns"},
			func(f *fakeRecords) error { return NamespaceNotTrashed(ctx, f, ns) }, true, []string{"trash namespace:ns"}},
		{"nothing in the way", nil, nil,
			func(f *fakeRecords) error { return NotTrashed(ctx, f, tbl) }, false, []string{"trash table:ns$t", "trash namespace:ns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRecords{protected: map[string]bool{}, trashed: map[string]bool{}}
			for _, k := range tc.protected {
				f.protected[k] = true
			}
			for _, k := range tc.trashed {
				f.trashed[k] = true
			}
			err := tc.run(f)
			if tc.refused {
				assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, f.calls, tc.asked)
		})
	}
	// Without governance there is nothing to consult.
	assert.NilError(t, NotProtected(ctx, nil, T, tbl, false))
	assert.NilError(t, NamespaceDrop(ctx, nil, ns, true, false))
	assert.NilError(t, NotTrashed(ctx, nil, tbl))
	assert.NilError(t, NamespaceNotTrashed(ctx, nil, ns))
}
