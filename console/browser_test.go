package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// The browser tests drive Debian's headless Chromium (scripts/chromium/install.sh) with chromedp:
// one browser for the package, a browser context (own cookies: one signed-in person) per caller.
// LANCECAT_TEST_CHROMIUM names the binary (make test sets it); without it the install script is
// asked (cached after the first time). No browser: the tests skip saying why, and fail under
// LANCECAT_REQUIRE_SERVICES=1 (make test).
//
// LANCECAT_UPDATE_SCREENSHOTS=1 regenerates the pictures in docs/console from these runs
// (LANCECAT_CONSOLE_SCREENSHOTS=<dir> saves them elsewhere); without either none are taken, and
// nothing is ever compared pixel by pixel: the tests assert what the pages say.

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

func chromiumPath() (string, string) {
	if p := os.Getenv("LANCECAT_TEST_CHROMIUM"); p != "" {
		return p, ""
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "chromium", "install.sh")
	out, err := exec.Command(script).Output()
	if err != nil {
		msg := "scripts/chromium/install.sh found no browser"
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		return "", msg
	}
	return strings.TrimSpace(string(out)), ""
}

// person is a fresh browser context (its own cookie jar) in the shared browser.
func person(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		path, why := chromiumPath()
		if path == "" {
			browser.err = why
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
			chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		// Start the browser now, on a context without a deadline (it lives as long as the context).
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			cancel()
			cancelAlloc()
			browser.err = "chromium did not start: " + err.Error()
			return
		}
		browser.ctx, browser.cancel = ctx, func() { cancel(); cancelAlloc() }
	})
	if browser.ctx == nil {
		if os.Getenv(testenv.EnvRequireServices) == "1" {
			t.Fatalf("no browser (%s=1 requires one): %s", testenv.EnvRequireServices, browser.err)
		}
		t.Skipf("no browser: %s (run scripts/chromium/install.sh, or make test)", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// Bound each person's whole run, so a page that never shows what is waited for fails the test
	// instead of hanging it.
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

// open navigates and waits for the page's main content.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	assert.NilError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main"))))
}

// submit clicks a button that posts a form and waits for the page it leads to.
func submit(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	// A destructive button asks with window.confirm; the test says yes.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.confirm = () => true; true"))
	assert.NilError(t, err)
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	assert.NilError(t, err, "clicking %s", sel)
	assert.NilError(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("main"))))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	// The page is loaded already: an element that is not there fails fast instead of being waited for.
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	assert.NilError(t, err, "reading %s", sel)
	return s
}

// has says whether the page has an element matching sel (without waiting for one).
func has(t *testing.T, ctx context.Context, sel string) bool {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("document.querySelector("+quoteJS(sel)+") !== null"))
	assert.NilError(t, err)
	return ok
}

func quoteJS(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func signIn(t *testing.T, ctx context.Context, base, key string) {
	t.Helper()
	open(t, ctx, base+"/console/")
	assert.Assert(t, has(t, ctx, "#signin"), "not signed in: the console asks for a credential")
	if key != "" {
		assert.NilError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#credential"), key)))
	}
	submit(t, ctx, "#signin")
	assert.Assert(t, has(t, ctx, "#tree") || has(t, ctx, "#empty"), "signed in, the estate shows")
}

// screenshot saves a full-page screenshot of the page as name.png: into docs/console (the
// README's and the docs' pictures) when LANCECAT_UPDATE_SCREENSHOTS=1, or into the directory
// LANCECAT_CONSOLE_SCREENSHOTS names. Otherwise nothing is taken: the tests assert what the pages
// say, never their pixels.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LANCECAT_CONSOLE_SCREENSHOTS")
	if os.Getenv("LANCECAT_UPDATE_SCREENSHOTS") == "1" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "docs", "console")
	}
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// evalJSON runs a script on the page and decodes its value into T.
func evalJSON[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	assert.NilError(t, err, "evaluating %s", js)
	return v
}

// versionOps are the timeline's versions and their operations, as the page shows them.
func versionOps(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	return evalJSON[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("#versions li")].map((li) =>
		[li.dataset.version, li.querySelector(".op").dataset.op]))`)
}

// kv is a two-column table (th, td) as a map.
func kv(t *testing.T, ctx context.Context, sel string) map[string]string {
	t.Helper()
	return evalJSON[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll(`+quoteJS(sel+" tr")+`)].map((tr) =>
		[tr.querySelector("th").textContent.trim(), tr.querySelector("td").textContent.trim()]))`)
}

// myAccess is the access page's "your access": relation → "held|rung@type:name,…".
func myAccess(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	return evalJSON[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("#my-access tbody tr")].map((tr) =>
		[tr.dataset.relation, tr.dataset.held + "|" + [...tr.querySelectorAll(".source")].map((s) => s.dataset.rung + "@" + s.dataset.from).sort().join(",")]))`)
}

// everyone is the access page's "everyone with access": "subject rung type:name" rows.
func everyone(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return evalJSON[[]string](t, ctx, `[...document.querySelectorAll("#effective-grants tbody tr")].map((tr) =>
		tr.dataset.subject + " " + tr.dataset.relation + " " + tr.dataset.from)`)
}

// treeRows are the estate tree's rows as the page shows them (data attributes of each row).
func treeRows(t *testing.T, ctx context.Context) []map[string]string {
	t.Helper()
	return evalJSON[[]map[string]string](t, ctx, `[...document.querySelectorAll("#tree tbody tr")].map((tr) => ({
		kind: tr.dataset.kind, name: tr.dataset.name, id: tr.dataset.id || "", rows: tr.dataset.rows || "",
		bytes: tr.dataset.bytes || "", partial: tr.dataset.partial, namespaces: tr.dataset.namespaces, tables: tr.dataset.tables,
		match: tr.classList.contains("match") ? "yes" : "" }))`)
}

func rowByID(rows []map[string]string, kind, id string) map[string]string {
	for _, r := range rows {
		if r["kind"] == kind && (r["id"] == id || r["id"] == "" && r["name"] == id) {
			return r
		}
	}
	return nil
}

// tableStats is what the stats door answers for a table.
func (c *catalog) tableStats(t *testing.T, key, id string) (rows, bytes int64) {
	t.Helper()
	var st struct {
		NumRows    int64 `json:"num_rows"`
		TotalBytes int64 `json:"total_bytes"`
	}
	assert.NilError(t, json.Unmarshal(c.post(t, key, "/v1/table/"+url.PathEscape(id)+"/stats", map[string]any{}), &st))
	return st.NumRows, st.TotalBytes
}

// lanceOperations are the operations Lance records for the table's versions, read with package
// lance from the location the catalog describes.
func (c *catalog) lanceOperations(t *testing.T, key, id string) map[string]string {
	t.Helper()
	var desc struct {
		Location string `json:"location"`
	}
	assert.NilError(t, json.Unmarshal(c.post(t, key, "/v1/table/"+url.PathEscape(id)+"/describe", map[string]any{}), &desc))
	ds, err := lance.OpenURI(context.Background(), desc.Location, storage.S3Config{})
	assert.NilError(t, err)
	hist, err := ds.VersionHistory(context.Background())
	assert.NilError(t, err)
	out := map[string]string{}
	for _, v := range hist {
		out[strconv.FormatUint(v.Version, 10)] = v.Operation
	}
	return out
}

// TestConsoleBrowser walks the console with authorization off (local use), asserting on what
// each page shows: sign in, the estate tree, a table (schema, preview with a filter), protect
// (and a drop the protection refuses), drop, undrop from the trash, warehouses and events.
func TestConsoleBrowser(t *testing.T) {
	c := serve(t, nil)
	c.seed(t, "")
	// A history worth showing: a second version, a tag and a branch on the first, an index, a
	// maintenance pass.
	c.do(t, "", http.MethodPost, "/v1/table/sales$items/insert", "application/vnd.apache.arrow.stream", itemsArrow(t))
	c.post(t, "", "/v1/table/sales$items/tags/create", map[string]any{"tag": "release", "version": 1})
	c.post(t, "", "/v1/table/sales$items/branches/create", map[string]any{"name": "dev", "from_version": 1})
	c.post(t, "", "/v1/table/sales$items/create_index", map[string]any{"column": "id", "index_type": "BTREE"})
	c.post(t, "", "/v1/table/sales$items/maintenance/run", map[string]any{"steps": []string{"compact"}})
	// A nested namespace, its table with a delete in its history, and a project's policy.
	c.post(t, "", "/v1/namespace/sales$eu/create", map[string]any{})
	c.do(t, "", http.MethodPost, "/v1/table/sales$eu$orders/create", "application/vnd.apache.arrow.stream", itemsArrow(t))
	c.post(t, "", "/v1/table/sales$eu$orders/delete", map[string]any{"predicate": "id = 3"})
	c.post(t, "", "/v1/projects/analytics/policy/set", map[string]any{"retain_versions": 4})
	ctx := person(t)

	// / leads to the console; the API's paths are untouched by it.
	res, err := client(t).Get(c.url + "/")
	assert.NilError(t, err)
	_ = res.Body.Close()
	assert.Check(t, is.Equal(res.StatusCode, http.StatusFound))
	assert.Check(t, is.Equal(res.Header.Get("Location"), "/console/"))
	assert.Check(t, is.Contains(string(c.do(t, "", http.MethodGet, "/v1/namespace/$/list", "", nil)), `"sales"`))

	signIn(t, ctx, c.url, "")
	assert.Check(t, is.Contains(text(t, ctx, "#principal"), "anonymous"))
	tree := text(t, ctx, "#tree")
	for _, want := range []string{"analytics", "lake", "sales", "items", "eu", "orders"} {
		assert.Check(t, is.Contains(tree, want))
	}
	// The tree's numbers are the stats door's, and every container adds up the tables below it.
	rows := treeRows(t, ctx)
	itemsRows, itemsBytes := c.tableStats(t, "", "sales$items")
	ordersRows, ordersBytes := c.tableStats(t, "", "sales$eu$orders")
	assert.Check(t, is.Equal(ordersRows, int64(4)), "orders lost id 3")
	for _, want := range []struct {
		kind, id, namespaces, tables string
		rows, bytes                  int64
	}{
		{"table", "sales$items", "", "", itemsRows, itemsBytes},
		{"table", "sales$eu$orders", "", "", ordersRows, ordersBytes},
		{"namespace", "sales$eu", "0", "1", ordersRows, ordersBytes},
		{"namespace", "sales", "1", "1", itemsRows + ordersRows, itemsBytes + ordersBytes},
		{"warehouse", "lake", "1", "0", itemsRows + ordersRows, itemsBytes + ordersBytes},
		{"project", "analytics", "", "", itemsRows + ordersRows, itemsBytes + ordersBytes},
	} {
		r := rowByID(rows, want.kind, want.id)
		if !assert.Check(t, r != nil, "%s %s in the tree: %v", want.kind, want.id, rows) {
			continue
		}
		assert.Check(t, is.Equal(r["rows"], strconv.FormatInt(want.rows, 10)), "%s %s", want.kind, want.id)
		assert.Check(t, is.Equal(r["bytes"], strconv.FormatInt(want.bytes, 10)), "%s %s", want.kind, want.id)
		assert.Check(t, is.Equal(r["partial"], "false"), "%s %s", want.kind, want.id)
		if want.kind == "namespace" || want.kind == "warehouse" {
			assert.Check(t, is.Equal(r["namespaces"], want.namespaces), "%s %s", want.kind, want.id)
			assert.Check(t, is.Equal(r["tables"], want.tables), "%s %s", want.kind, want.id)
		}
	}
	screenshot(t, ctx, "estate")
	// Search runs on the server: the match, with the containers above it, and nothing else.
	open(t, ctx, c.url+"/console/?q=ORDERS")
	var found []string
	for _, r := range treeRows(t, ctx) {
		found = append(found, r["kind"]+" "+r["name"]+" "+r["match"])
	}
	assert.Check(t, is.DeepEqual(found, []string{"project analytics ", "warehouse lake ", "namespace sales ", "namespace eu ", "table orders yes"}))
	open(t, ctx, c.url+"/console/?q=nothing-is-called-this")
	assert.Check(t, is.Contains(text(t, ctx, "#no-match"), "nothing-is-called-this"))
	open(t, ctx, c.url+"/console/")

	// The table: schema, stats, and the row preview (the query door's Arrow, decoded).
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#tree tr[data-id="sales$items"] a`)))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(text(t, ctx, "h1"), "sales$items"))
	assert.Check(t, is.Contains(text(t, ctx, "#schema"), "name"))
	assert.Check(t, is.Equal(text(t, ctx, "#num-rows"), "10"))
	assert.Check(t, is.Contains(text(t, ctx, "#preview"), "apple"))
	versions := text(t, ctx, "#versions")
	assert.Check(t, is.Contains(versions, "tag release"))
	assert.Check(t, is.Contains(versions, "branch dev"))
	assert.Check(t, is.Contains(text(t, ctx, "#indices"), "id_idx"))
	assert.Check(t, is.Contains(text(t, ctx, "#maintenance"), "maintenance"))
	assert.NilError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#filter"), "name = 'pear' OR id > 4")))
	submit(t, ctx, "#apply-filter")
	prows := text(t, ctx, "#preview tbody")
	assert.Check(t, is.Contains(prows, "pear"))
	assert.Check(t, is.Contains(prows, "kiwi"))
	assert.Check(t, !strings.Contains(prows, "apple"), "the filter leaves apple out: %q", prows)
	// Every version with the operation its Lance transaction records.
	assert.Check(t, is.DeepEqual(versionOps(t, ctx), c.lanceOperations(t, "", "sales$items")))
	assert.Check(t, is.Contains(text(t, ctx, "#versions"), "Append"))
	assert.Check(t, is.Contains(text(t, ctx, "#versions"), "CreateIndex"))
	// The policy in force is the project's: no table or namespace record applies.
	assert.Check(t, is.Equal(text(t, ctx, "#policy-won"), "project analytics"))
	assert.Check(t, is.Equal(kv(t, ctx, "#policy-knobs")["versions retained"], "4"))
	screenshot(t, ctx, "table")

	// A namespace's record wins over the project's, whole: the project's knob no longer applies.
	c.post(t, "", "/v1/namespace/sales/policy/set", map[string]any{"retention_days": 3})
	open(t, ctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	assert.Check(t, is.Equal(text(t, ctx, "#policy-won"), "namespace sales"))
	knobs := kv(t, ctx, "#policy-knobs")
	assert.Check(t, is.Equal(knobs["retention (days)"], "3"))
	assert.Check(t, is.Equal(knobs["versions retained"], "10"), "the default, not the project's 4")
	// Below it, a nested namespace inherits it, and a table's own record wins over both.
	open(t, ctx, c.url+"/console/namespace?id="+url.QueryEscape("sales$eu"))
	assert.Check(t, is.Equal(text(t, ctx, "#policy-won"), "namespace sales"))
	c.post(t, "", "/v1/table/sales$eu$orders/policy/set", map[string]any{"compact_enabled": false})
	open(t, ctx, c.url+"/console/table?id="+url.QueryEscape("sales$eu$orders"))
	assert.Check(t, is.Equal(text(t, ctx, "#policy-won"), "table sales$eu$orders"))
	knobs = kv(t, ctx, "#policy-knobs")
	assert.Check(t, is.Equal(knobs["compaction"], "off"))
	assert.Check(t, is.Equal(knobs["retention (days)"], "7"), "the default, not the namespace's 3")
	ops := versionOps(t, ctx)
	assert.Check(t, is.DeepEqual(ops, c.lanceOperations(t, "", "sales$eu$orders")))
	assert.Check(t, is.Equal(ops["2"], "Delete"), "%v", ops)
	screenshot(t, ctx, "policy")
	open(t, ctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))

	// Protect it: the page says so, and a drop is refused with the door's own 409.
	submit(t, ctx, "#protect-toggle")
	assert.Check(t, is.Contains(text(t, ctx, "#flash"), "protected: true"))
	assert.Check(t, has(t, ctx, "#protected"))
	submit(t, ctx, "#drop")
	assert.Check(t, is.Contains(text(t, ctx, "#flash-error"), "409"))
	assert.Check(t, has(t, ctx, "#schema"), "still there")

	// Unprotect, drop: the namespace page shows it in the trash; undrop brings it back.
	submit(t, ctx, "#protect-toggle")
	assert.Check(t, !has(t, ctx, "#protected"))
	submit(t, ctx, "#drop")
	assert.Check(t, is.Contains(text(t, ctx, "#flash"), "dropped table sales$items"))
	assert.Check(t, is.Contains(text(t, ctx, "#trash"), "sales$items"))
	assert.Check(t, !has(t, ctx, `#contents tr[data-id="sales$items"]`), "gone from the contents")
	assert.Check(t, has(t, ctx, `#contents tr[data-id="sales$eu$orders"]`), "the nested namespace's table is still there")
	// The namespace's subtree to every depth, with the numbers of what is left in it.
	sub := rowByID(evalJSON[[]map[string]string](t, ctx, `[...document.querySelectorAll("#subtree tbody tr")].map((tr) => ({
		kind: tr.dataset.kind, id: tr.dataset.id || "", rows: tr.dataset.rows || "" }))`), "table", "sales$eu$orders")
	assert.Check(t, sub != nil && sub["rows"] == strconv.FormatInt(ordersRows, 10), "%v", sub)
	assert.Check(t, is.Contains(text(t, ctx, "#summary"), "1 namespace(s) and 0 table(s) directly inside; "+strconv.FormatInt(ordersRows, 10)+" rows"))
	screenshot(t, ctx, "trash")
	submit(t, ctx, "#trash .undrop")
	assert.Check(t, is.Contains(text(t, ctx, "#flash"), "restored table sales$items"))
	assert.Check(t, is.Contains(text(t, ctx, "#contents"), "items"))
	assert.Check(t, has(t, ctx, "#trash-empty"))

	// Warehouses: deactivate and activate.
	open(t, ctx, c.url+"/console/warehouses")
	assert.Check(t, is.Contains(text(t, ctx, "#warehouses"), "active"))
	submit(t, ctx, "#warehouses button")
	assert.Check(t, is.Contains(text(t, ctx, "#flash"), "deactivated warehouse lake"))
	assert.Check(t, is.Contains(text(t, ctx, "#warehouses"), "deactivated"))
	submit(t, ctx, "#warehouses button")
	assert.Check(t, is.Contains(text(t, ctx, "#flash"), "activated warehouse lake"))

	// The event stream shows what happened, newest first.
	open(t, ctx, c.url+"/console/events")
	ev := text(t, ctx, "#events")
	for _, want := range []string{"table_created", "table_dropped", "warehouse_deactivated"} {
		assert.Check(t, is.Contains(ev, want))
	}
	assert.Check(t, !strings.Contains(ev, "garden"))
	// It follows the journal live: a change made meanwhile by another client shows up in place.
	c.post(t, "", "/v1/warehouses/lake/namespaces", map[string]any{"namespace": "garden"})
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = chromedp.Run(wctx, chromedp.Evaluate[bool](`new Promise((ok) => {
		const seen = () => document.querySelector("#events tbody").textContent.includes("garden");
		const tick = () => seen() ? ok(true) : setTimeout(tick, 200);
		tick();
	})`, chromedp.EvalAwaitPromise))
	assert.NilError(t, err, "the new event appears without a reload")
	screenshot(t, ctx, "events")
}

// TestConsoleBrowserAuthorized runs the console with authorization on (OpenFGA): a caller with
// no grant sees nothing (an empty estate; a table that exists and one that does not answer the
// same 403 the API gives); an owner grants a reader through the access page, the reader then sees
// the table and its rows, cannot protect it, and loses it again on revoke.
func TestConsoleBrowserAuthorized(t *testing.T) {
	fga := testenv.OpenFGA(t)
	c := serve(t, func(cfg *app.Config) {
		cfg.Governance.Authz = app.AuthzOpenFGA
		cfg.Governance.OpenFGAURL = fga
		cfg.Governance.OpenFGAStore = fmt.Sprintf("console-%d", time.Now().UnixNano())
		cfg.Governance.EstateAdmins = "user:ada"
	})
	ada, bob := c.apiKey(t, "user:ada"), c.apiKey(t, "user:bob")
	c.seed(t, ada)

	// Signing in needs a credential the catalog accepts.
	bctx := person(t)
	open(t, bctx, c.url+"/console/")
	submit(t, bctx, "#signin")
	assert.Check(t, is.Contains(text(t, bctx, "#login-error"), "authorization is on"))
	assert.NilError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS("#credential"), "not-a-key")))
	submit(t, bctx, "#signin")
	assert.Check(t, is.Contains(text(t, bctx, "#login-error"), "not accepted"))

	// Bob, with no grant, sees nothing, and learns nothing about what exists: a clear message,
	// no refusal.
	signIn(t, bctx, c.url, bob)
	assert.Check(t, is.Equal(text(t, bctx, "#principal"), "user:bob"))
	assert.Check(t, has(t, bctx, "#empty"), "bob's estate is empty")
	assert.Check(t, !strings.Contains(text(t, bctx, "main"), "sales"))
	assert.Check(t, !strings.Contains(text(t, bctx, "main"), "403"), "no raw refusal on bob's home page")
	open(t, bctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	exists := text(t, bctx, "#page-error")
	open(t, bctx, c.url+"/console/table?id="+url.QueryEscape("sales$nope"))
	missing := text(t, bctx, "#page-error")
	assert.Check(t, strings.HasPrefix(exists, "403 "), exists)
	assert.Check(t, is.Equal(strings.ReplaceAll(exists, "items", "X"), strings.ReplaceAll(missing, "nope", "X")),
		"an existing table and a missing one look the same to bob")
	open(t, bctx, c.url+"/console/access?type=table&id="+url.QueryEscape("sales$items"))
	assert.Check(t, strings.HasPrefix(text(t, bctx, "#page-error"), "403 "))
	open(t, bctx, c.url+"/console/events")
	assert.Check(t, strings.HasPrefix(text(t, bctx, "#page-error"), "403 "), "the event stream is the estate admins'")

	// Ada, an estate admin, grants bob reader on the table from its access page.
	actx := person(t)
	signIn(t, actx, c.url, ada)
	assert.Check(t, is.Contains(text(t, actx, "#tree"), "items"))
	open(t, actx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	_, err := chromedp.RunResponse(actx, chromedp.Click(chromedp.CSS("#access-link")))
	assert.NilError(t, err)
	assert.NilError(t, chromedp.Do(actx, chromedp.SendKeys(chromedp.CSS("#grant-subject"), "user:bob")))
	submit(t, actx, "#grant")
	assert.Check(t, is.Contains(text(t, actx, "#flash"), "granted user:bob reader on table sales$items"))
	assert.Check(t, is.Contains(text(t, actx, "#grants"), "user:bob"))
	screenshot(t, actx, "access")

	// Bob now sees the table (and the namespace above it), and its rows, without a refusal for
	// what he may not list (the projects, the catalog root).
	open(t, bctx, c.url+"/console/")
	assert.Check(t, is.Contains(text(t, bctx, "#tree"), "items"))
	assert.Check(t, !strings.Contains(text(t, bctx, "main"), "403"), "no raw refusal on bob's home page")
	// His access to it, and where it comes from: his own reader grant, on the table itself.
	open(t, bctx, c.url+"/console/access?type=table&id="+url.QueryEscape("sales$items"))
	mine := myAccess(t, bctx)
	assert.Check(t, is.Equal(mine["reads"], "true|reader@table:sales$items"))
	assert.Check(t, is.Equal(mine["writes"], "false|"))
	assert.Check(t, is.Equal(mine["owns"], "false|"))
	assert.Check(t, has(t, bctx, "#grants-note"), "bob does not manage the grants: he is told, not refused")
	assert.Check(t, !has(t, bctx, "#page-error"))
	// A writer grant on the namespace reaches the table: inherited, named as such.
	c.post(t, ada, "/v1/access/grant", map[string]any{"object_type": "namespace", "object_id": "sales", "subject": "user:bob", "relation": "writer"})
	open(t, bctx, c.url+"/console/access?type=table&id="+url.QueryEscape("sales$items"))
	mine = myAccess(t, bctx)
	assert.Check(t, is.Equal(mine["reads"], "true|reader@table:sales$items,writer@namespace:sales"))
	assert.Check(t, is.Equal(mine["writes"], "true|writer@namespace:sales"))
	assert.Check(t, is.Equal(mine["owns"], "false|"))
	assert.Check(t, is.Contains(text(t, bctx, "#my-access"), "inherited from namespace sales (writer)"))
	screenshot(t, bctx, "my-access")
	// Ada, who manages it, sees everyone's: bob's two grants and her own, each with its source.
	open(t, actx, c.url+"/console/access?type=table&id="+url.QueryEscape("sales$items"))
	all := everyone(t, actx)
	for _, want := range []string{"user:bob reader table:sales$items", "user:bob writer namespace:sales", "user:ada owner table:sales$items",
		"user:ada owner namespace:sales", "user:ada admin project:analytics"} {
		assert.Check(t, is.Contains(all, want))
	}
	mine = myAccess(t, actx)
	assert.Check(t, is.Contains(mine["owns"], "admin@project:analytics"))
	assert.Check(t, is.Contains(mine["owns"], "owner@table:sales$items"))
	assert.Check(t, strings.HasPrefix(mine["manage_grants"], "true|"))
	open(t, bctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	assert.Check(t, is.Contains(text(t, bctx, "#preview"), "apple"))
	// A reader cannot protect: the protection door's refusal, shown as it came.
	if has(t, bctx, "#protect-toggle") {
		submit(t, bctx, "#protect-toggle")
		assert.Check(t, strings.HasPrefix(text(t, bctx, "#flash-error"), "403 "))
	}

	// Ada revokes both; bob is back to nothing.
	submit(t, actx, `#grants .revoke[data-subject="user:bob"]`)
	assert.Check(t, is.Contains(text(t, actx, "#flash"), "revoked user:bob reader"))
	c.post(t, ada, "/v1/access/revoke", map[string]any{"object_type": "namespace", "object_id": "sales", "subject": "user:bob", "relation": "writer"})
	open(t, bctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	assert.Check(t, strings.HasPrefix(text(t, bctx, "#page-error"), "403 "))
}

// TestConsoleBrowserOIDC signs in through an OIDC issuer in Chromium: the button on the sign-in
// page, the issuer (fake, oidc_test.go, signing in at once), the callback page moving on, the
// estate as the token's principal. The issuer is named "localhost" and the catalog 127.0.0.1, two
// sites, so the callback arrives cross-site as from a real issuer: this is what shows the
// SameSite=Lax flow cookie comes back and the Strict session cookie is sent after the callback.
func TestConsoleBrowserOIDC(t *testing.T) {
	f := newFakeIssuer(t, "lancecat-console")
	f.base = strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	c := oidcCatalog(t, f, "lancecat-console", "lancecat-console")
	c.seed(t, c.apiKey(t, "user:alice"))
	ctx := person(t)
	open(t, ctx, c.url+"/console/")
	assert.Check(t, is.Contains(text(t, ctx, "#oidc-signin"), "Sign in with localhost"))
	_, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#oidc-signin")))
	assert.NilError(t, err)
	assert.NilError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#tree"))))
	assert.Check(t, is.Equal(text(t, ctx, "#principal"), "user:alice"))
	assert.Check(t, is.Contains(text(t, ctx, "#tree"), "items"))
}
