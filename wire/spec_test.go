package wire

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestNearest(t *testing.T) {
	known := []string{"branch", "from_branch", "from_version", "id", "identity", "name", "predicate", "version"}
	for _, c := range []struct{ name, want string }{
		{"predicat", "predicate"}, {"PREDICATE", "predicate"}, {"brnach", "branch"}, {"ids", "id"},
		{"from_versoin", "from_version"}, {"zzzzzz", ""}, {"x", ""}, {strings.Repeat("a", 100), ""},
	} {
		assert.Check(t, is.Equal(nearest(c.name, known), c.want), c.name)
	}
	assert.Check(t, is.Equal(nearest("version", []string{"from_branch", "from_version", "id", "name"}), "from_version"))
}
