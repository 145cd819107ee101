package guards

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
)

func stub(stage Stage, name string, err error, ran *[]string) Guard {
	return Guard{stage, name, func(context.Context, *Request) error {
		*ran = append(*ran, name)
		return err
	}}
}

// TestChainOrder: a door table listing guards out of the documented order is refused at once.
func TestChainOrder(t *testing.T) {
	var ran []string
	cases := []struct {
		name   string
		stages []Stage
		ok     bool
	}{
		{"documented order", []Stage{StageIdentity, StageShape, StageParent, StageAuthorization, StageConflict, StageAdmission}, true},
		{"several of one stage", []Stage{StageShape, StageShape, StageAuthorization}, true},
		{"empty", nil, true},
		{"authorization before shape", []Stage{StageAuthorization, StageShape}, false},
		{"admission before conflict", []Stage{StageAdmission, StageConflict}, false},
		{"identity last", []Stage{StageShape, StageIdentity}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gs []Guard
			for _, s := range tc.stages {
				gs = append(gs, stub(s, s.String(), nil, &ran))
			}
			if tc.ok {
				assert.DeepEqual(t, NewChain(gs...).Stages(), Chain(gs).Stages())
				return
			}
			assert.Assert(t, panics(func() { NewChain(gs...) }))
		})
	}
	assert.Assert(t, panics(func() { NewChain(stub(StageConflict, "c", nil, &ran)).Then(stub(StageShape, "s", nil, &ran)) }))
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

// TestChainRun: the first refusal stops the chain; what a guard holds is released by done, also
// after a refusal.
func TestChainRun(t *testing.T) {
	refused := errors.New("refused")
	for _, tc := range []struct {
		name    string
		failAt  int // -1: none
		wantRan []string
	}{
		{"all pass", -1, []string{"identity", "shape", "authorization", "admission"}},
		{"shape refuses", 1, []string{"identity", "shape"}},
		{"admission refuses", 3, []string{"identity", "shape", "authorization", "admission"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			released := 0
			var gs []Guard
			for i, s := range []Stage{StageIdentity, StageShape, StageAuthorization, StageAdmission} {
				var err error
				if i == tc.failAt {
					err = refused
				}
				g := stub(s, s.String(), err, &ran)
				inner := g.Check
				g.Check = func(ctx context.Context, r *Request) error {
					r.Defer(func() { released++ })
					return inner(ctx, r)
				}
				gs = append(gs, g)
			}
			done, err := NewChain(gs...).Run(context.Background(), &Request{})
			if tc.failAt >= 0 {
				assert.Assert(t, errors.Is(err, refused))
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, ran, tc.wantRan)
			done()
			assert.Equal(t, released, len(tc.wantRan))
		})
	}
}

// TestDoorTablesInOrder: every door of both tables builds a chain in the documented order, with
// authorization on and off, and every control door either authorizes or says why it does not.
func TestDoorTablesInOrder(t *testing.T) {
	for _, d := range []Deps{{Delimiter: "$"}, {Delimiter: "$", Authorizer: &fakeAuthz{}}} {
		for op := range SpecDoors {
			assert.Assert(t, !panics(func() { SpecChain(op, d) }), op)
		}
		for op, door := range ControlDoors {
			var c Chain
			assert.Assert(t, !panics(func() { c = ControlChain(op, d) }), op)
			assert.Equal(t, c[0].Stage, StageIdentity, op)
			if door.Table != "" {
				assert.Assert(t, door.Action == "" && door.InService == "", "%s: a table door authorizes as a spec door only", op)
			} else if door.Action == "" {
				assert.Assert(t, door.InService != "", "control door %s neither authorizes nor says why", op)
			} else {
				assert.Assert(t, door.Object != nil, op)
				assert.Equal(t, door.InService, "", op)
			}
		}
	}
	// With authorization on a spec operation without a door is refused; off, it is its handler's.
	c := SpecChain("NoSuchOperation", Deps{Authorizer: &fakeAuthz{}})
	_, err := c.Run(context.Background(), &Request{})
	assert.ErrorContains(t, err, "no authorization rule")
	// The batch doors name their tables in the body: no door in the chain, their handler checks
	// each entry.
	assert.Equal(t, len(SpecChain("BatchCommitTables", Deps{Authorizer: &fakeAuthz{}})), 0)
	assert.Equal(t, len(SpecChain("BatchCommitTables", Deps{})), 0)
	assert.Equal(t, len(SpecChain("ListAllTables", Deps{Authorizer: &fakeAuthz{}})), 0)
	// Disabled authorization installs no authorization guard.
	assert.DeepEqual(t, SpecChain("DescribeTable", Deps{Authorizer: authz.Disabled{}}).Stages(), []Stage{StageShape})
}

// TestRequestHandedOn: the request a chain passed travels with the context to the handler, which
// acts on the id PathID parsed instead of parsing its own.
func TestRequestHandedOn(t *testing.T) {
	ctx := context.Background()
	assert.Assert(t, RequestFrom(ctx) == nil)
	r := &Request{Param: func(string) string { return "ns$t%20x" }}
	_, err := NewChain(PathID("$")).Run(ctx, r)
	assert.NilError(t, err)
	got := RequestFrom(WithRequest(ctx, r))
	assert.Assert(t, got == r)
	assert.DeepEqual(t, got.ID, ident.ID{"ns", "t x"})
}
