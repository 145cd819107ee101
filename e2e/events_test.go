package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
)

type eventList struct {
	Events []struct {
		Cursor string `json:"cursor"`
		Type   string `json:"type"`
		Object string `json:"object"`
	} `json:"events"`
	Cursor string `json:"cursor"`
	Reset  bool   `json:"reset"`
}

func readEvents(t *testing.T, base, since string) eventList {
	t.Helper()
	u := base + "/v1/events?limit=1000"
	if since != "" {
		u += "&since=" + url.QueryEscape(since)
	}
	resp, err := http.Get(u)
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 200)
	var out eventList
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// waitEvents reads since cursor until at least n events are there (at most 10 s).
func waitEvents(t *testing.T, base, since string, n int) eventList {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := readEvents(t, base, since)
		if len(got.Events) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEventsAreReplicaWide: two replicas serving one catalog (same roots) answer GET /v1/events
// with one stream holding the changes made through either, and a cursor one replica issued
// continues on the other; a replica restarted on the roots still has them (issue 19: events were
// a per-replica ring buffer, so behind a load balancer each replica showed its share and a
// restart lost them).
func TestEventsAreReplicaWide(t *testing.T) {
	dir := t.TempDir()
	cfg := app.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = filepath.Join(dir, "catalog")
	a, b := serve(t, cfg), serve(t, cfg)
	post := func(base, path, body string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 200, path)
	}
	post(a, "/v1/projects", `{"id":"pa"}`)
	post(b, "/v1/projects", `{"id":"pb"}`)
	post(a, "/v1/projects/pa/protection", `{"protected":true}`)

	// Each replica writes its events to the journal moments after the change (asynchronously):
	// wait until both are there.
	fromA := waitEvents(t, a, "", 3)
	fromB := readEvents(t, b, "")
	assert.DeepEqual(t, fromA, fromB)
	var got []string
	for _, ev := range fromA.Events {
		got = append(got, ev.Type+" "+ev.Object)
	}
	assert.DeepEqual(t, got, []string{"project_created project:pa", "project_created project:pb", "project_protected project:pa"})

	// A's cursor after the first event, read on B.
	rest := readEvents(t, b, fromA.Events[0].Cursor)
	assert.Equal(t, len(rest.Events), 2)
	assert.Assert(t, !rest.Reset)

	// A third replica started later sees everything, and what it adds reaches the others.
	c := serve(t, cfg)
	post(c, "/v1/projects", `{"id":"pc"}`)
	after := waitEvents(t, a, fromA.Cursor, 1)
	assert.Equal(t, len(after.Events), 1)
	assert.Equal(t, after.Events[0].Object, "project:pc", fmt.Sprint(after))
}
