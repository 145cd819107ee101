package handlers

import (
	"runtime"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
)

// TestQueryBodyReadOnce: a query body is read once and its JSON decoded in one pass with its
// order_by (seam review point 4). It used to be read twice (the second time copied again through
// io.ReadAll) and parsed a third time for order_by: a query with a 4 MiB filter allocated about
// six times its body; the bound is four (the body, the field check's copy of each value, the
// decoded filter, and slack).
func TestQueryBodyReadOnce(t *testing.T) {
	const size = 4 << 20
	body := `{"k":1,"order_by":[{"column_name":"id"}],"filter":"` + strings.Repeat("a", size) + `"}`
	s := New(Options{})
	run := func() uint64 {
		c, _ := newContext(body, nil, "t")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := s.QueryTable(c, "t", nsapi.QueryTableParams{})
		runtime.ReadMemStats(&after)
		assert.Assert(t, nserr.Is(err, nserr.ErrUnsupported), "decoded, then not backed: %v", err)
		return after.TotalAlloc - before.TotalAlloc
	}
	run() // warm: lazily built tables (field sets) are not the request's
	got := run()
	t.Logf("%d bytes for a %d-byte body", got, size)
	assert.Assert(t, got < 4*size, "a query with a %d-byte body allocated %d bytes", size, got)
}

// TestPathIDFromGuards: the id the guard chain parsed (guards.PathID, handed on with the request)
// is the one the handler acts on; it is parsed again only without a chain in front.
func TestPathIDFromGuards(t *testing.T) {
	s := New(Options{})
	c, _ := newContext(`{"k":1}`, nil, "t")
	id, err := s.pathID(c, nil)
	assert.NilError(t, err)
	assert.DeepEqual(t, id, ident.ID{"t"})

	// The chain ran: its id is taken (a bad delimiter was the chain's to refuse).
	c, _ = newContext(`{}`, nil, "t")
	chain := guards.NewChain(guards.PathID("$"))
	r := &guards.Request{Param: func(string) string { return "ns$t" }}
	_, err = chain.Run(c.Request().Context(), r)
	assert.NilError(t, err)
	c.SetRequest(c.Request().WithContext(guards.WithRequest(c.Request().Context(), r)))
	id, err = s.pathID(c, nil)
	assert.NilError(t, err)
	assert.DeepEqual(t, id, ident.ID{"ns", "t"})
	var body struct {
		Id *[]string `json:"id"`
	}
	id, err = s.decodeRequest(c, nil, &body)
	assert.NilError(t, err)
	assert.DeepEqual(t, id, ident.ID{"ns", "t"})
	assert.DeepEqual(t, *body.Id, []string{"ns", "t"}) // the body id is reconciled with the chain's
}
