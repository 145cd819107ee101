package governance

import (
	"strconv"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

func types(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func TestEventsRing(t *testing.T) {
	e := NewEvents(3)
	evs, cursor, reset, err := e.Since("", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(evs), 0)
	assert.Assert(t, !reset)
	start := cursor

	var cursors []string
	for i := 1; i <= 5; i++ {
		cursors = append(cursors, e.Emit(Event{Type: "e" + strconv.Itoa(i)}).Cursor)
	}
	for _, tc := range []struct {
		name      string
		since     string
		limit     int
		want      []string
		wantReset bool
	}{
		{"from the oldest retained", "", 0, []string{"e3", "e4", "e5"}, false},
		{"after a retained cursor", cursors[2], 0, []string{"e4", "e5"}, false},
		{"the cursor just before the oldest", cursors[1], 0, []string{"e3", "e4", "e5"}, false},
		{"fell off the buffer", cursors[0], 0, []string{"e3", "e4", "e5"}, true},
		{"the empty buffer's cursor fell off", start, 0, []string{"e3", "e4", "e5"}, true},
		{"at the head", cursors[4], 0, []string{}, false},
		{"another replica's cursor", "ffffffff.2", 0, []string{"e3", "e4", "e5"}, true},
		{"a cursor from the future", e.epoch + ".99", 0, []string{"e3", "e4", "e5"}, true},
		{"limited", "", 2, []string{"e3", "e4"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, next, reset, err := e.Since(tc.since, tc.limit)
			assert.NilError(t, err)
			assert.DeepEqual(t, append([]string{}, types(evs)...), tc.want)
			assert.Equal(t, reset, tc.wantReset)
			if len(evs) > 0 {
				assert.Equal(t, next, evs[len(evs)-1].Cursor)
			} else {
				assert.Equal(t, next, tc.since)
			}
		})
	}
	_, _, _, err = e.Since("garbage", 0)
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
}
