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
	assert.Equal(t, g.Stage, StageAdmission)
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
	chain := Admission(ReadOnly(false), s.Guard())
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

// TestAdmissionOrder: read-only refuses before a slot is taken.
func TestAdmissionOrder(t *testing.T) {
	s := NewShedder(1)
	chain := Admission(ReadOnly(true), s.Guard())
	assert.DeepEqual(t, chain.Stages(), []Stage{StageAdmission, StageAdmission})
	_, err := chain.Run(context.Background(), &Request{Method: "POST", Route: "/v1/table/:id/insert"})
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
	assert.Equal(t, len(s.slots), 0)
}
