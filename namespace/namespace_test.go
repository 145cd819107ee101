package namespace

import (
	"context"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

func newTestNamespace(t *testing.T) (*Namespace, storage.Bucket) {
	t.Helper()
	b, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	return New(b, Options{RootURI: "/root", CompactAfter: 4}), b
}

func TestNamespacesAndTables(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"prod"}, map[string]string{"owner": "alice"}, "")
	assert.NilError(t, err)
	_, err = n.CreateNamespace(ctx, ident.ID{"prod", "team"}, nil, "")
	assert.NilError(t, err)
	// What the register below names: a table declared there (its reservation) and not yet written.
	_, err = b.Put(ctx, "somewhere/"+ReservedMarker, strings.NewReader(""), 0)
	assert.NilError(t, err)

	cases := []struct {
		name string
		err  error
		run  func() error
	}{
		{"duplicate namespace", nserr.ErrNamespaceAlreadyExists, func() error {
			_, err := n.CreateNamespace(ctx, ident.ID{"prod"}, nil, "")
			return err
		}},
		{"exist ok", nil, func() error { _, err := n.CreateNamespace(ctx, ident.ID{"prod"}, nil, catalog.ModeExistOk); return err }},
		{"missing parent", nserr.ErrNamespaceNotFound, func() error {
			_, err := n.CreateNamespace(ctx, ident.ID{"nope", "x"}, nil, "")
			return err
		}},
		{"declare", nil, func() error { _, err := n.DeclareTable(ctx, ident.ID{"prod", "t"}, "", nil); return err }},
		{"declare again", nserr.ErrTableAlreadyExists, func() error {
			_, err := n.DeclareTable(ctx, ident.ID{"prod", "t"}, "", nil)
			return err
		}},
		{"declare in missing namespace", nserr.ErrNamespaceNotFound, func() error {
			_, err := n.DeclareTable(ctx, ident.ID{"nope", "t"}, "", nil)
			return err
		}},
		{"drop non-empty", nserr.ErrNamespaceNotEmpty, func() error {
			_, err := n.DropNamespace(ctx, ident.ID{"prod"}, "", "")
			return err
		}},
		{"describe missing table", nserr.ErrTableNotFound, func() error {
			_, err := n.DescribeTable(ctx, ident.ID{"prod", "zz"})
			return err
		}},
		{"register outside the root", nserr.ErrInvalidInput, func() error {
			_, err := n.RegisterTable(ctx, ident.ID{"prod", "r"}, "/elsewhere/x.lance", "", nil)
			return err
		}},
		{"register where there is no table", nserr.ErrTableNotFound, func() error {
			_, err := n.RegisterTable(ctx, ident.ID{"prod", "r"}, "/root/nothing-here", "", nil)
			return err
		}},
		{"register inside the root", nil, func() error {
			_, err := n.RegisterTable(ctx, ident.ID{"prod", "r"}, "/root/somewhere", "", nil)
			return err
		}},
		{"rename onto a taken name", nserr.ErrTableAlreadyExists, func() error {
			_, err := n.RenameTable(ctx, ident.ID{"prod", "t"}, nil, "r")
			return err
		}},
		{"rename across", nil, func() error {
			_, err := n.RenameTable(ctx, ident.ID{"prod", "t"}, ident.ID{"prod", "team"}, "t2")
			return err
		}},
	}
	for _, c := range cases {
		err := c.run()
		if c.err == nil {
			assert.NilError(t, err, c.name)
		} else {
			assert.ErrorIs(t, err, c.err, c.name)
		}
	}

	props, err := n.DescribeNamespace(ctx, ident.ID{"prod"})
	assert.NilError(t, err)
	assert.DeepEqual(t, props, map[string]string{"owner": "alice"})
	page, err := n.ListTables(ctx, ident.ID{"prod"}, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, page.Names, []string{"r"})
	tb, err := n.DescribeTable(ctx, ident.ID{"prod", "r"})
	assert.NilError(t, err)
	assert.Equal(t, tb.URI, "/root/somewhere")
	all, err := n.ListAllTables(ctx, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, all.Names, []string{"prod$r", "prod$team$t2"})

	// A new Namespace over the same root (a restart, another process) sees the same state.
	n2 := New(n.root, Options{RootURI: "/root"})
	all2, err := n2.ListAllTables(ctx, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, all2, all)

	_, err = n.DropNamespace(ctx, ident.ID{"prod"}, "", catalog.BehaviorCascade)
	assert.NilError(t, err)
	ns, err := n.ListNamespaces(ctx, nil, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(ns.Names), 0)
}

func TestPagination(t *testing.T) {
	ctx := context.Background()
	n, _ := newTestNamespace(t)
	for _, name := range []string{"e", "a", "d", "b", "c"} { // more writes than CompactAfter
		_, err := n.CreateNamespace(ctx, ident.ID{name}, nil, "")
		assert.NilError(t, err)
	}
	var seen []string
	token := ""
	for {
		p, err := n.ListNamespaces(ctx, nil, token, 2)
		assert.NilError(t, err)
		seen = append(seen, p.Names...)
		if p.NextToken == "" {
			break
		}
		token = p.NextToken
	}
	assert.DeepEqual(t, seen, []string{"a", "b", "c", "d", "e"})
}

// raceProcesses runs op at once in 8 processes over the root b (Namespace values of their own,
// each with other compaction settings), process i calling op(n, i), and returns how many
// succeeded and the others' errors.
func raceProcesses(b storage.Bucket, op func(n *Namespace, i int) error) (wins int, errs []error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := op(New(b, Options{RootURI: "/root", CompactAfter: 3 + i}), i)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return wins, errs
}

// Two Namespace values over one root stand for two processes: the primary key must hold across
// them, not only inside one.
func TestConcurrentCreatesAndRenames(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)

	wins, errs := raceProcesses(b, func(n *Namespace, _ int) error {
		_, err := n.DeclareTable(ctx, ident.ID{"ns", "t"}, "", nil)
		return err
	})
	assert.Equal(t, wins, 1)
	for _, err := range errs {
		assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)
	}

	wins, errs = raceProcesses(b, func(n *Namespace, _ int) error {
		_, err := n.RenameTable(ctx, ident.ID{"ns", "t"}, nil, "renamed")
		return err
	})
	assert.Equal(t, wins, 1)
	for _, err := range errs {
		assert.Assert(t, nserr.Is(err, nserr.ErrTableNotFound) || nserr.Is(err, nserr.ErrTableAlreadyExists), "%v", err)
	}
	page, err := New(b, Options{}).ListTables(ctx, ident.ID{"ns"}, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, page.Names, []string{"renamed"})
}
