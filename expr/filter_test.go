package expr

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestFilterText: regexp_match in a filter is the boolean Lance coerces it to, wherever it is;
// other filters are left as they are.
func TestFilterText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"id > 1", "id > 1"},
		{"regexp_match(name, '^n1')", "coalesce(regexp_like(name, '^n1'), false)"},
		{"NOT regexp_match(name, 'x') AND id > 2", "NOT coalesce(regexp_like(name, 'x'), false) AND id > 2"},
		{"REGEXP_MATCH(name, 'a', 'i') = true", "coalesce(regexp_like(name, 'a', 'i'), false) = true"},
		{"regexp_match(", "regexp_match("},
	} {
		got := FilterText(tc.in)
		if tc.in == tc.want {
			assert.Equal(t, got, tc.in)
			continue
		}
		// compare as parsed: the printer's spacing and parentheses are its own
		want, err := Parse(tc.want)
		assert.NilError(t, err)
		g, err := Parse(got)
		assert.NilError(t, err, got)
		assert.Equal(t, g.String(), want.String(), tc.in)
	}
}
