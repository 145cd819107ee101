package guards

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

func TestIsReadRequest(t *testing.T) {
	for _, tc := range []struct {
		method, route string
		read          bool
	}{
		{"GET", "/v1/projects", true},
		{"POST", "/v1/table/:id/describe", true},
		{"POST", "/v1/table/:id/tags/version", true},
		{"POST", "/v1/table/:id/version", false},
		{"POST", "/v1/table/:id/create", false},
		{"POST", "", false},
		{"POST", "/v1/describe/:id/frobnicate", false}, // only what follows the last parameter counts
	} {
		assert.Equal(t, IsReadRequest(tc.method, tc.route), tc.read, "%s %s", tc.method, tc.route)
	}
}

func TestReadOnly(t *testing.T) {
	assert.Assert(t, ReadOnly(false) == nil)
	g := ReadOnly(true)
	assert.Equal(t, g.Stage, StageMode)
	assert.NilError(t, g.Check(context.Background(), &Request{Method: "POST", Route: "/v1/table/:id/describe"}))
	err := g.Check(context.Background(), &Request{Method: "POST", Route: "/v1/table/:id/create"})
	var later *RetryLater
	assert.Assert(t, errors.As(err, &later))
	assert.Equal(t, later.After, ReadOnlyRetryAfter)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
}

// TestShedder: writes take a slot until done; one more is refused at once (429, Retry-After 1);
// reads never take one; a released slot admits again.
func TestShedder(t *testing.T) {
	assert.Assert(t, NewShedder(0) == nil)
	assert.Assert(t, NewShedder(0).Guard() == nil)
	s := NewShedder(2)
	chain := UnroutedChain(Deps{Shed: s})
	ctx := context.Background()
	write := func() (func(), error) {
		return chain.Run(ctx, &Request{Method: "POST", Route: "/v1/table/:id/insert"})
	}
	d1, err := write()
	assert.NilError(t, err)
	d2, err := write()
	assert.NilError(t, err)
	d3, err := write()
	var later *RetryLater
	assert.Assert(t, errors.As(err, &later))
	assert.Equal(t, later.After, 1)
	assert.Equal(t, nserr.CodeOf(err), nserr.Throttling)
	d3() // a refusal holds nothing
	for range 5 {
		done, err := chain.Run(ctx, &Request{Method: "GET", Route: "/v1/projects"})
		assert.NilError(t, err)
		done()
	}
	d1()
	d4, err := write()
	assert.NilError(t, err)
	d2()
	d4()
}

// TestReplicaGuardsOrder: read-only mode answers right after identity, before anything about the
// request is looked at (a malformed write to a read-only replica is 503, not 400) and before a
// slot is taken; shedding is last, so a request refused by any other guard holds no slot.
func TestReplicaGuardsOrder(t *testing.T) {
	s := NewShedder(1)
	ro := Deps{Delimiter: "$", Authorizer: &fakeAuthz{}, ReadOnly: true, Shed: s}
	assert.DeepEqual(t, SpecChain("CreateTable", ro).Stages(), []Stage{StageMode, StageShape, StageAuthorization, StageAdmission})
	assert.DeepEqual(t, ControlChain("SetTableProtection", ro).Stages(),
		[]Stage{StageIdentity, StageMode, StageShape, StageShape, StageAuthorization, StageAdmission})
	assert.DeepEqual(t, UnroutedChain(ro).Stages(), []Stage{StageMode, StageAdmission})

	ctx := context.Background()
	malformed := &Request{Method: "POST", Route: "/v1/table/:id/protection", Principal: "user:bob",
		Param: func(string) string { return "ns%24" }}
	_, err := ControlChain("SetTableProtection", ro).Run(ctx, malformed)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "%v", err)
	assert.Equal(t, len(s.slots), 0)

	// Writable: the same request is 400 (shape), then a denied one 403; neither takes the slot.
	rw := ro
	rw.ReadOnly = false
	_, err = ControlChain("SetTableProtection", rw).Run(ctx, malformed)
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
	denied := &Request{Method: "POST", Route: "/v1/table/:id/protection", Principal: "user:bob",
		Param: func(string) string { return "ns%24t" }}
	_, err = ControlChain("SetTableProtection", rw).Run(ctx, denied)
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied, "%v", err)
	assert.Equal(t, len(s.slots), 0)
}
