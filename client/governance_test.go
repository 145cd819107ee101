package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/controlclient"
)

// TestGovernanceHelpersOnTheWire: each governance helper sends its door's method, route, delimiter
// and body, and decodes the answer; a problem answer unwraps to its sentinel. (Against the real
// server: cmd/lancecat's TestCLI… tests drive every one of these through the CLI.)
func TestGovernanceHelpersOnTheWire(t *testing.T) {
	type sent struct{ method, path, delimiter, body string }
	var got sent
	answer := `{}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = sent{r.Method, r.URL.EscapedPath(), r.URL.Query().Get("delimiter"), string(b)}
		if r.URL.Query().Get("fail") != "" || answer == "" {
			problem(w, 404, client.CodeTableNotFound)
			return
		}
		jsonAnswer(w, 200, answer)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithDelimiter("."))
	assert.NilError(t, err)
	ctx := context.Background()
	tbl, ns := []string{"shop", "items"}, []string{"shop"}

	for _, tc := range []struct {
		name   string
		answer string
		call   func() (any, error)
		want   sent
		check  func(t *testing.T, v any)
	}{
		{"undrop table", `{"id":["shop","items"],"location":"/x"}`,
			func() (any, error) { return c.UndropTable(ctx, tbl) },
			sent{"POST", "/v1/table/shop.items/undrop", ".", ""},
			func(t *testing.T, v any) { assert.Equal(t, *v.(*client.Undropped).Location, "/x") }},
		{"undrop namespace", `{"id":["shop"],"tables":["shop.items"]}`,
			func() (any, error) { return c.UndropNamespace(ctx, ns) },
			sent{"POST", "/v1/namespace/shop/undrop", ".", ""},
			func(t *testing.T, v any) { assert.DeepEqual(t, *v.(*client.Undropped).Tables, []string{"shop.items"}) }},
		{"table protection", `{"id":["shop","items"],"protected":true}`,
			func() (any, error) { return c.TableProtection(ctx, tbl) },
			sent{"GET", "/v1/table/shop.items/protection", ".", ""},
			func(t *testing.T, v any) { assert.Assert(t, v.(*client.Protection).Protected) }},
		{"set table protection", `{"id":["shop","items"],"protected":false}`,
			func() (any, error) { return c.SetTableProtection(ctx, tbl, false) },
			sent{"POST", "/v1/table/shop.items/protection", ".", `{"protected":false}`},
			func(t *testing.T, v any) { assert.Assert(t, !v.(*client.Protection).Protected) }},
		{"namespace protection", `{"id":["shop"],"protected":true}`,
			func() (any, error) { return c.NamespaceProtection(ctx, ns) },
			sent{"GET", "/v1/namespace/shop/protection", ".", ""}, nil},
		{"set namespace protection", `{"id":["shop"],"protected":true}`,
			func() (any, error) { return c.SetNamespaceProtection(ctx, ns, true) },
			sent{"POST", "/v1/namespace/shop/protection", ".", `{"protected":true}`}, nil},
		{"set project protection", `{"id":"p","protected":true}`,
			func() (any, error) { return c.SetProjectProtection(ctx, "p", true) },
			sent{"POST", "/v1/projects/p/protection", "", `{"protected":true}`}, nil},
		{"set warehouse protection", `{"id":"w","project":"p","bucket":"b","root_uri":"s3://b","status":"active","protected":true}`,
			func() (any, error) { return c.SetWarehouseProtection(ctx, "w", true) },
			sent{"POST", "/v1/warehouses/w/protection", "", `{"protected":true}`},
			func(t *testing.T, v any) { assert.Assert(t, *v.(*controlclient.Warehouse).Protected) }},
		{"table tasks", `{"tasks":[{"id":["shop","items"],"kind":"maintenance"}]}`,
			func() (any, error) { return c.TableTasks(ctx, tbl) },
			sent{"GET", "/v1/table/shop.items/tasks", ".", ""},
			func(t *testing.T, v any) { assert.Equal(t, v.([]client.Task)[0].Kind, "maintenance") }},
		{"namespace tasks", `{"tasks":[]}`,
			func() (any, error) { return c.NamespaceTasks(ctx, ns) },
			sent{"GET", "/v1/namespace/shop/tasks", ".", ""}, nil},
		{"maintenance run", `{"dry_run":true,"version":3,"steps":[{"step":"compact","status":"skipped","duration_ms":1}]}`,
			func() (any, error) {
				return c.RunTableMaintenance(ctx, tbl, client.Maintenance{Steps: []client.MaintenanceStep{client.StepCompact}, DryRun: true, OlderThanSeconds: 60})
			},
			sent{"POST", "/v1/table/shop.items/maintenance/run", ".", `{"dry_run":true,"older_than_seconds":60,"steps":["compact"]}`},
			func(t *testing.T, v any) { assert.Equal(t, v.(*client.MaintenanceReport).Version, int64(3)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer = tc.answer
			v, err := tc.call()
			assert.NilError(t, err)
			got.body = compactJSON(got.body)
			assert.Equal(t, got, tc.want)
			if tc.check != nil {
				tc.check(t, v)
			}
			answer = ""
			_, err = tc.call()
			assert.Assert(t, errors.Is(err, client.ErrTableNotFound), "%v", err)
		})
	}

	// Ids a route cannot carry are refused before sending.
	answer = `{"id":["loose"]}`
	_, err = c.UndropTable(ctx, []string{"loose"})
	assert.NilError(t, err) // one part is a table at the root
	_, err = c.UndropNamespace(ctx, nil)
	assert.Assert(t, errors.Is(err, client.ErrInvalidInput), "the root namespace is never dropped: %v", err)
	_, err = c.TableTasks(ctx, []string{"a.b"})
	assert.Assert(t, errors.Is(err, client.ErrInvalidInput), "%v", err)
}

// compactJSON is s with its insignificant whitespace removed ("" stays "").
func compactJSON(s string) string {
	if s == "" {
		return s
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
