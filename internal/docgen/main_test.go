package main

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/spec"
)

// TestPagesCoverTheirSources: each page has one row per thing it documents — every setting of
// lancecat serve with its variable, every spec code with its status, every pinned operation.
func TestPagesCoverTheirSources(t *testing.T) {
	cfg := app.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.BindFlags(fs, func(string) (string, bool) { return "", false })
	page := string(Configuration())
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		env := "LANCECAT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		assert.Check(t, is.Contains(page, "| `--"+f.Name+"` | `"+env+"` |"), "the row of --%s", f.Name)
	})
	assert.Check(t, is.Equal(strings.Count(page, "\n| `--"), n))

	page = string(Errors())
	for _, c := range nserr.Codes() {
		assert.Check(t, strings.Contains(page, "| `"+c.Name()+"` | "), "code %d", int(c))
	}
	assert.Check(t, is.Equal(len(nserr.Codes()), 24))

	routes, err := Routes()
	assert.NilError(t, err)
	lance, _, ok := strings.Cut(string(routes), "## The control plane")
	assert.Assert(t, ok)
	rows := regexp.MustCompile("(?m)^\\| [A-Z]+ \\| `/v1/").FindAllString(lance, -1)
	assert.Check(t, is.Equal(len(rows), spec.LanceNamespace().Operations))
}
