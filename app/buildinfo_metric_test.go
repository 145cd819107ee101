package app

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/buildinfo"
)

// TestBuildInfoMetric: the operations listener's /metrics carries lancecat_build_info with the
// running build in its labels.
func TestBuildInfoMetric(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Root = t.TempDir()
	cfg.Listen, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	_, ops := runTLS(t, cfg) // no TLS configured: plain HTTP
	resp, err := http.Get("http://" + ops + "/metrics")
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	in := buildinfo.Get()
	want := fmt.Sprintf(`lancecat_build_info{commit=%q,date=%q,goversion=%q,version=%q} 1`, in.Commit, in.Date, in.GoVersion, in.Version)
	assert.Check(t, is.Contains(string(b), want), "%s", grepLines(string(b), "lancecat_build_info"))
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
