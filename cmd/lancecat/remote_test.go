package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/cobra"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// The commands for people against a served catalog (app.Run, as `lancecat serve` runs it): the
// CLI's cobra root runs in-process; the tests check the table output, the --json values and the
// exit codes.

// serveConfig serves cfg on a free port until the test ends and returns its base URL.
func serveConfig(t *testing.T, cfg app.Config) string {
	t.Helper()
	cfg.Listen, cfg.LogLevel = "127.0.0.1:0", "warn"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, nil, ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			assert.NilError(t, <-done)
		})
		return "http://" + addr.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve: not ready after 30s")
	}
	return ""
}

// cliAt runs the CLI against url (with key, if any) and answers its exit code, stdout and stderr.
func cliAt(url, key string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append(append([]string{}, args...), "--url", url)
		if key != "" {
			full = append(full, "--api-key", key)
		}
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
}

// decode parses out as JSON into a value of type T.
func decode[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	assert.NilError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// arrowStreamFile writes n rows (id int64, name string) as an Arrow IPC stream file.
func arrowStreamFile(t *testing.T, n int) string { return arrowRows(t, n, false) }

// arrowRows writes n rows (id int64, name string) in batches of 4 as an Arrow IPC file (asFile)
// or stream.
func arrowRows(t *testing.T, n int, asFile bool) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "rows.arrow")
	f, err := os.Create(path)
	assert.NilError(t, err)
	defer f.Close()
	type writer interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	var w writer = ipc.NewWriter(f, ipc.WithSchema(schema))
	if asFile {
		w, err = ipc.NewFileWriter(f, ipc.WithSchema(schema))
		assert.NilError(t, err)
	}
	for off := int64(0); off < rec.NumRows(); off += 4 {
		part := rec.NewSlice(off, min(off+4, rec.NumRows()))
		assert.NilError(t, w.Write(part))
		part.Release()
	}
	assert.NilError(t, w.Close())
	return path
}

// TestCLINamespacesAndTables: namespace and table commands, authorization off.
func TestCLINamespacesAndTables(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "catalog")
	cfg.Governance.TrashGraceDays = 7
	url := serveConfig(t, cfg)
	cli := cliAt(url, "")

	code, out, errs := cli("namespace", "list", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, strings.TrimSpace(out), "[]")

	code, out, errs = cli("namespace", "create", "shop", "-p", "team=search", "--property", "tier=gold")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "created namespace shop\n")
	code, _, errs = cli("namespace", "create", "shop")
	assert.Equal(t, code, exitConflict, errs)
	assert.Check(t, is.Contains(errs, "lancecat namespace create: "))
	assert.Check(t, !strings.Contains(errs, "Usage:"), "a failure of the work prints no usage")
	code, out, errs = cli("namespace", "create", "shop.eu", "--json")
	assert.Equal(t, code, 0, errs)
	assert.DeepEqual(t, decode[map[string]any](t, out), map[string]any{"id": []any{"shop", "eu"}, "created": true})
	code, _, _ = cli("namespace", "create", "nope.eu")
	assert.Equal(t, code, exitNotFound, "the parent is missing")

	code, out, _ = cli("namespace", "list")
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "NAMESPACE\nshop\n")
	code, out, _ = cli("namespace", "list", "shop", "--json")
	assert.Equal(t, code, 0)
	assert.DeepEqual(t, decode[[]nsEntry](t, out), []nsEntry{{Name: "eu", ID: []string{"shop", "eu"}}})

	code, out, _ = cli("namespace", "describe", "shop")
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "PROPERTY  VALUE\nteam      search\ntier      gold\n")
	code, out, _ = cli("namespace", "describe", "shop", "--json")
	assert.Equal(t, code, 0)
	ns := decode[struct {
		ID         []string
		Properties map[string]string
	}](t, out)
	assert.DeepEqual(t, ns.ID, []string{"shop"})
	assert.Equal(t, ns.Properties["team"], "search")
	code, _, errs = cli("namespace", "describe", "nope")
	assert.Equal(t, code, exitNotFound, errs)
	assert.Check(t, is.Contains(errs, "NamespaceNotFound"))

	// Tables: declared, and created from an Arrow IPC stream.
	code, out, errs = cli("table", "create", "shop.items")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "created table shop.items\n")
	code, _, _ = cli("table", "create", "shop.items")
	assert.Equal(t, code, exitConflict)
	code, out, errs = cli("table", "create", "shop.data", "--from", arrowStreamFile(t, 10), "--json")
	assert.Equal(t, code, 0, errs)
	created := decode[map[string]any](t, out)
	assert.Equal(t, created["created"], true)
	assert.Equal(t, created["version"], 1.0)
	code, _, errs = cli("table", "create", "shop.bad", "--from", filepath.Join(t.TempDir(), "missing.arrow"))
	assert.Equal(t, code, 2, errs)
	notArrow := filepath.Join(t.TempDir(), "rows.csv")
	assert.NilError(t, os.WriteFile(notArrow, []byte("id,name\n1,a\n"), 0o600))
	code, _, errs = cli("table", "create", "shop.bad", "--from", notArrow)
	assert.Equal(t, code, 2, errs)
	assert.Check(t, is.Contains(errs, "neither an Arrow IPC file nor stream"))
	code, _, _ = cli("table", "describe", "shop.bad")
	assert.Equal(t, code, exitNotFound, "a refused input creates nothing")
	// An Arrow IPC file (read through its footer), and a stream on standard input (in a
	// namespace of their own, dropped with them).
	code, _, errs = cli("namespace", "create", "imports")
	assert.Equal(t, code, 0, errs)
	code, out, errs = cli("table", "create", "imports.fromfile", "--from", arrowRows(t, 10, true))
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "created table imports.fromfile at version 1\n")
	stream, err := os.ReadFile(arrowStreamFile(t, 6))
	assert.NilError(t, err)
	var sout, serr bytes.Buffer
	root := newRootCmd(&sout, &serr)
	root.SetIn(bytes.NewReader(stream))
	root.SetArgs([]string{"table", "create", "imports.fromstdin", "--from", "-", "--url", url})
	assert.NilError(t, root.Execute(), serr.String())
	assert.Equal(t, sout.String(), "created table imports.fromstdin at version 1\n")
	code, out, _ = cli("table", "list", "imports")
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "TABLE\nimports.fromfile\nimports.fromstdin\n")
	code, _, errs = cli("namespace", "drop", "imports", "--cascade")
	assert.Equal(t, code, 0, errs)

	code, out, _ = cli("table", "list", "shop")
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "TABLE\nshop.data\nshop.items\n")
	code, out, _ = cli("table", "list", "shop", "--json")
	assert.Equal(t, code, 0)
	assert.DeepEqual(t, decode[[]nsEntry](t, out), []nsEntry{{Name: "data", ID: []string{"shop", "data"}}, {Name: "items", ID: []string{"shop", "items"}}})
	code, out, _ = cli("table", "list", "shop.eu", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, strings.TrimSpace(out), "[]")

	code, out, errs = cli("table", "describe", "shop.data")
	assert.Equal(t, code, 0, errs)
	lines := strings.Split(out, "\n")
	assert.Check(t, is.Equal(lines[0], "TABLE     shop.data"))
	assert.Check(t, strings.HasPrefix(lines[1], "LOCATION  file://") || strings.HasPrefix(lines[1], "LOCATION  /"), lines[1])
	assert.Check(t, is.Equal(lines[2], "VERSION   1"))
	assert.Check(t, is.Equal(lines[3], "DECLARED  false"))
	assert.Check(t, is.Contains(out, "COLUMN  TYPE    NULLABLE\nid      int64   false\nname    string  true\n"))
	code, out, _ = cli("table", "describe", "shop.data", "--json")
	assert.Equal(t, code, 0)
	desc := decode[map[string]any](t, out)
	assert.Equal(t, desc["version"], 1.0)
	assert.Check(t, is.Contains(desc["location"], "data"))
	code, out, _ = cli("table", "describe", "shop.items", "--json")
	assert.Equal(t, code, 0)
	_, hasVersion := decode[map[string]any](t, out)["version"]
	assert.Check(t, !hasVersion, "a declared table has no version yet: %s", out)
	code, _, errs = cli("table", "describe", "shop.nope")
	assert.Equal(t, code, exitNotFound, errs)
	assert.Check(t, is.Contains(errs, "TableNotFound"))

	code, out, _ = cli("table", "versions", "shop.data")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "VERSION  TIMESTAMP"), out)
	code, out, _ = cli("table", "versions", "shop.data", "--json")
	assert.Equal(t, code, 0)
	vs := decode[[]map[string]any](t, out)
	assert.Equal(t, len(vs), 1)
	assert.Equal(t, vs[0]["version"], 1.0)

	// Protection refuses a drop; lifted, the drop goes through; undrop brings it back.
	code, out, errs = cli("table", "protect", "shop.data", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[map[string]any](t, out)["protected"], true)
	code, out, _ = cli("table", "protect", "shop.data", "--status")
	assert.Equal(t, code, 0)
	assert.Check(t, is.Contains(out, "shop.data  true"), out)
	code, _, errs = cli("table", "drop", "shop.data")
	assert.Equal(t, code, exitConflict, "a protected table is not dropped: %s", errs)
	t.Logf("drop of a protected table: exit %d: %s", code, errs)
	code, out, _ = cli("table", "protect", "shop.data", "--off", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, decode[map[string]any](t, out)["protected"], false)
	code, _, _ = cli("table", "protect", "shop.data", "--off", "--status")
	assert.Equal(t, code, 2)

	code, out, errs = cli("table", "maintenance", "run", "shop.data", "--step", "compact", "--dry-run", "--json")
	assert.Equal(t, code, 0, errs)
	rep := decode[struct {
		DryRun bool `json:"dry_run"`
		Steps  []struct{ Step, Status string }
	}](t, out)
	assert.Check(t, rep.DryRun)
	assert.Equal(t, len(rep.Steps), 1)
	assert.Equal(t, rep.Steps[0].Step, "compact")
	code, out, errs = cli("table", "maintenance", "run", "shop.data")
	assert.Equal(t, code, 0, errs)
	assert.Check(t, strings.HasPrefix(out, "STEP "), out)
	assert.Check(t, is.Contains(out, "cleanup"))
	code, _, _ = cli("table", "maintenance", "run", "shop.data", "--step", "vacuum")
	assert.Equal(t, code, 2)
	code, out, errs = cli("table", "tasks", "shop.data", "--json")
	assert.Equal(t, code, 0, errs)
	tasks := decode[[]map[string]any](t, out)
	assert.Assert(t, len(tasks) >= 1, "the passes are recorded: %s", out)
	assert.Equal(t, tasks[0]["kind"], "maintenance")

	code, out, errs = cli("table", "drop", "shop.data")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "dropped table shop.data\n")
	code, _, _ = cli("table", "drop", "shop.data")
	assert.Equal(t, code, exitNotFound)
	code, out, errs = cli("namespace", "tasks", "shop")
	assert.Equal(t, code, 0, errs)
	assert.Check(t, is.Contains(out, "shop.data"), "the pending trash deadline: %s", out)
	code, out, errs = cli("table", "undrop", "shop.data", "--json")
	assert.Equal(t, code, 0, errs)
	assert.DeepEqual(t, decode[map[string]any](t, out)["id"], []any{"shop", "data"})
	code, _, _ = cli("table", "undrop", "shop.data")
	assert.Check(t, code != 0, "nothing left to undrop")
	code, _, _ = cli("table", "describe", "shop.data")
	assert.Equal(t, code, 0)

	code, _, errs = cli("namespace", "drop", "shop")
	assert.Equal(t, code, exitConflict, errs)
	assert.Check(t, is.Contains(errs, "NamespaceNotEmpty"))
	code, out, _ = cli("namespace", "drop", "shop.eu", "--json")
	assert.Equal(t, code, 0)
	assert.DeepEqual(t, decode[map[string]any](t, out), map[string]any{"id": []any{"shop", "eu"}, "dropped": true})
	code, _, _ = cli("namespace", "drop", "shop.eu")
	assert.Equal(t, code, exitNotFound)

	// A protected namespace is not dropped; a cascade drop comes back whole with undrop.
	code, out, errs = cli("namespace", "protect", "shop")
	assert.Equal(t, code, 0, errs)
	assert.Check(t, strings.HasPrefix(out, "ID    PROTECTED  SET BY"), out)
	assert.Check(t, is.Contains(out, "\nshop  true "), out)
	code, _, errs = cli("namespace", "drop", "shop", "--cascade")
	assert.Equal(t, code, exitConflict, "a protected namespace stays: %s", errs)
	code, _, _ = cli("namespace", "protect", "shop", "--off")
	assert.Equal(t, code, 0)
	code, out, _ = cli("namespace", "protect", "shop", "--status", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, decode[map[string]any](t, out)["protected"], false)
	code, _, errs = cli("namespace", "drop", "shop", "--cascade")
	assert.Equal(t, code, 0, errs)
	code, out, _ = cli("namespace", "list", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, strings.TrimSpace(out), "[]")
	code, out, errs = cli("namespace", "undrop", "shop")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "RESTORED    KIND\nshop        namespace\nshop.data   table\nshop.items  table\n")
	code, _, errs = cli("table", "describe", "shop.data")
	assert.Equal(t, code, 0, "the table came back with its namespace: %s", errs)
	code, _, _ = cli("namespace", "undrop", "nope")
	assert.Check(t, code == exitNotFound, "nothing to undrop: %d", code)

	// Misuse is 2 with the usage; an unreachable server is 1.
	code, _, errs = cli("table", "describe")
	assert.Equal(t, code, 2)
	assert.Check(t, is.Contains(errs, "missing TABLE"))
	assert.Check(t, is.Contains(errs, "Usage:"))
	code, _, _ = cli("table", "describe", "shop..x")
	assert.Equal(t, code, 2)
	var o, e bytes.Buffer
	assert.Equal(t, run([]string{"namespace", "list", "--url", "http://127.0.0.1:1", "--timeout", "2s"}, &o, &e), 1)
	assert.Check(t, is.Contains(e.String(), "lancecat namespace list: "))
}

// TestCLIControlPlane: project, warehouse and grant commands, authorization off.
func TestCLIControlPlane(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "catalog")
	url := serveConfig(t, cfg)
	cli := cliAt(url, "")

	// The variables stand in for flags not given, and --help never shows the key they hold.
	t.Setenv("LANCECAT_URL", url)
	t.Setenv("LANCECAT_API_KEY", "lck_secret")
	var o, e bytes.Buffer
	assert.Equal(t, run([]string{"project", "list", "--json"}, &o, &e), 0, e.String())
	assert.Equal(t, strings.TrimSpace(o.String()), "[]")
	o.Reset()
	assert.Equal(t, run([]string{"project", "list", "--help"}, &o, &e), 0)
	assert.Check(t, !strings.Contains(o.String(), "lck_secret"), o.String())
	assert.Check(t, is.Contains(o.String(), "$LANCECAT_API_KEY"))

	code, out, errs := cli("project", "list", "--json")
	assert.Equal(t, code, 0, errs)
	before := decode[[]map[string]any](t, out)
	code, out, errs = cli("project", "create", "analytics", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[map[string]any](t, out)["id"], "analytics")
	code, _, _ = cli("project", "create", "analytics")
	assert.Equal(t, code, exitConflict)
	code, out, _ = cli("project", "list", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, len(decode[[]map[string]any](t, out)), len(before)+1)
	code, out, _ = cli("project", "list")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "PROJECT "), out)
	assert.Check(t, is.Contains(out, "\nanalytics "))
	code, out, _ = cli("project", "describe", "analytics")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "PROJECT     analytics\n"), out)
	code, _, _ = cli("project", "describe", "nope")
	assert.Equal(t, code, exitNotFound)

	code, out, errs = cli("project", "protect", "analytics", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[map[string]any](t, out)["protected"], true)
	code, _, errs = cli("project", "drop", "analytics")
	assert.Equal(t, code, exitConflict, "a protected project stays: %s", errs)
	t.Logf("drop of a protected project: exit %d: %s", code, errs)
	code, _, _ = cli("project", "protect", "analytics", "--off")
	assert.Equal(t, code, 0)

	code, out, errs = cli("warehouse", "list", "--project", "analytics", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, strings.TrimSpace(out), "[]")
	code, _, _ = cli("warehouse", "describe", "nope")
	assert.Equal(t, code, exitNotFound)
	code, out, errs = cli("warehouse", "create", "analytics", "w1", "--json")
	assert.Equal(t, code, 0, errs)
	wh := decode[map[string]any](t, out)
	assert.Equal(t, wh["id"], "w1")
	assert.Equal(t, wh["project"], "analytics")
	assert.Equal(t, wh["status"], "active")
	code, _, _ = cli("warehouse", "create", "analytics", "w1")
	assert.Equal(t, code, exitConflict)
	code, _, _ = cli("warehouse", "create", "nope", "w2")
	assert.Equal(t, code, exitNotFound, "no such project")
	code, out, _ = cli("warehouse", "list", "--project", "analytics")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "WAREHOUSE  PROJECT    BUCKET"), out)
	assert.Check(t, is.Contains(out, "\nw1         analytics  "), out)
	code, out, _ = cli("warehouse", "describe", "w1")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "WAREHOUSE  w1\nPROJECT    analytics\n"), out)
	code, out, _ = cli("project", "describe", "analytics")
	assert.Equal(t, code, 0)
	assert.Check(t, is.Contains(out, "\nWAREHOUSE"), out)
	code, _, errs = cli("project", "drop", "analytics")
	assert.Equal(t, code, exitConflict, "a project holding a warehouse stays: %s", errs)
	code, out, errs = cli("warehouse", "protect", "w1", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[map[string]any](t, out)["protected"], true)
	code, _, errs = cli("warehouse", "drop", "w1")
	assert.Equal(t, code, exitConflict, "a protected warehouse stays: %s", errs)
	code, _, _ = cli("warehouse", "protect", "w1", "--off")
	assert.Equal(t, code, 0)
	code, out, errs = cli("warehouse", "drop", "w1", "--cascade")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "dropped warehouse w1\n")
	code, _, _ = cli("warehouse", "describe", "w1")
	assert.Equal(t, code, exitNotFound)

	code, out, errs = cli("project", "drop", "analytics")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "dropped project analytics\n")
	code, _, _ = cli("project", "drop", "analytics")
	assert.Equal(t, code, exitNotFound)

	code, _, errs = cli("grant", "list", "bucket", "x")
	assert.Equal(t, code, 2)
	assert.Check(t, is.Contains(errs, `object type "bucket"`))
	code, _, errs = cli("grant", "add", "table", "shop.items", "user:bob")
	assert.Equal(t, code, 2)
	assert.Check(t, is.Contains(errs, "missing RELATION"))
}

// TestCLIGrantsWithAuthorization: with --authz openfga (the real OpenFGA) and alice an estate
// admin, keys made by `lancecat apikey create`: alice creates and grants; bob is refused (5)
// until granted reader, then reads but still may not drop nor grant; the revoke takes it back;
// no key at all is refused too.
func TestCLIGrantsWithAuthorization(t *testing.T) {
	fga := testenv.OpenFGA(t)
	root := filepath.Join(t.TempDir(), "catalog")
	cfg := app.DefaultConfig()
	cfg.Root = root
	cfg.Governance.Authz = app.AuthzOpenFGA
	cfg.Governance.OpenFGAURL = fga
	cfg.Governance.OpenFGAStore = storeName("lancecat-cli")
	cfg.Governance.EstateAdmins = "user:alice"
	url := serveConfig(t, cfg)
	key := func(principal string) string {
		var out, errb bytes.Buffer
		assert.Equal(t, run([]string{"apikey", "create", "--root", root, "--principal", principal}, &out, &errb), 0, errb.String())
		return strings.TrimSpace(out.String())
	}
	alice, bob := cliAt(url, key("user:alice")), cliAt(url, key("user:bob"))
	anonymous := cliAt(url, "")

	code, _, errs := alice("namespace", "create", "shop")
	assert.Equal(t, code, 0, errs)
	code, _, errs = alice("table", "create", "shop.items", "--from", arrowStreamFile(t, 3))
	assert.Equal(t, code, 0, errs)

	code, _, errs = anonymous("namespace", "list")
	assert.Equal(t, code, exitRefused, "no key: %s", errs)
	assert.Check(t, is.Contains(errs, "Unauthenticated"))
	code, _, errs = cliAt(url, "lck_not-a-key")("table", "list", "shop")
	assert.Equal(t, code, exitRefused, "a bad key: %s", errs)
	code, _, errs = bob("table", "describe", "shop.items")
	assert.Check(t, code == exitRefused || code == exitNotFound, "bob may not see it: %d %s", code, errs)
	code, _, errs = bob("grant", "add", "table", "shop.items", "user:bob", "reader")
	assert.Equal(t, code, exitRefused, "bob may not grant himself: %s", errs)
	assert.Check(t, is.Contains(errs, "PermissionDenied"))

	code, out, errs := alice("grant", "add", "table", "shop.items", "user:bob", "reader")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "OBJECT            SUBJECT   RELATION  \ntable shop.items  user:bob  reader    granted\n")
	code, out, errs = alice("grant", "list", "table", "shop.items", "--json")
	assert.Equal(t, code, 0, errs)
	grants := decode[[]grantEntry](t, out)
	assert.Check(t, is.Contains(grants, grantEntry{"table", "shop.items", "user:bob", "reader"}), out)
	code, out, _ = alice("grant", "list", "table", "shop.items")
	assert.Equal(t, code, 0)
	assert.Check(t, strings.HasPrefix(out, "SUBJECT "), out)
	assert.Check(t, is.Contains(out, "\nuser:bob "))

	code, out, errs = bob("table", "describe", "shop.items", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[map[string]any](t, out)["version"], 1.0)
	code, _, errs = bob("table", "drop", "shop.items")
	assert.Equal(t, code, exitRefused, "a reader does not drop: %s", errs)
	code, _, errs = bob("grant", "add", "table", "shop.items", "user:carol", "reader")
	assert.Equal(t, code, exitRefused, "a reader does not grant: %s", errs)

	code, out, errs = alice("grant", "revoke", "table", "shop.items", "user:bob", "reader", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, decode[grantEntry](t, out), grantEntry{"table", "shop.items", "user:bob", "reader"})
	code, _, errs = bob("table", "describe", "shop.items")
	assert.Check(t, code == exitRefused || code == exitNotFound, "revoked: %d %s", code, errs)

	// Control-plane grants take a project's plain id.
	code, _, errs = alice("project", "create", "p")
	assert.Equal(t, code, 0, errs)
	code, _, errs = alice("grant", "add", "project", "p", "user:bob", "member")
	assert.Equal(t, code, 0, errs)
	code, out, errs = alice("grant", "list", "project", "p", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Check(t, is.Contains(decode[[]grantEntry](t, out), grantEntry{"project", "p", "user:bob", "member"}), out)
	code, _, errs = bob("project", "list")
	assert.Equal(t, code, exitRefused, "listing every project is the estate's: %s", errs)
}

// TestCLICompletion: cobra's completion knows the new commands, grant's object types and
// relations, and the maintenance steps (what `lancecat completion <shell>` scripts ask for).
func TestCLICompletion(t *testing.T) {
	complete := func(args ...string) []string {
		t.Helper()
		var out, errb bytes.Buffer
		assert.Equal(t, run(append([]string{cobra.ShellCompRequestCmd}, args...), &out, &errb), 0, errb.String())
		var words []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if !strings.HasPrefix(l, ":") { // the last line is the directive
				w, _, _ := strings.Cut(l, "\t")
				words = append(words, w)
			}
		}
		return words
	}
	top := complete("")
	for _, c := range []string{"namespace", "table", "grant", "project", "warehouse", "apikey", "completion"} {
		assert.Check(t, is.Contains(top, c))
	}
	assert.DeepEqual(t, complete("table", ""), []string{"create", "describe", "drop", "list", "maintenance", "protect", "tasks", "undrop", "versions"})
	assert.DeepEqual(t, complete("grant", "add", ""), []string{"project", "warehouse", "namespace", "table"})
	assert.Check(t, is.Contains(complete("grant", "add", "table", "shop.items", "user:bob", ""), "reader"))
	assert.DeepEqual(t, complete("table", "maintenance", "run", "shop.items", "--step", ""), []string{"compact", "optimize_indices", "cleanup"})
	assert.Check(t, is.Contains(complete("namespace", "list", "--"), "--api-key"))
}
