package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// The browser tests drive Debian's headless Chromium (scripts/chromium/install.sh) with chromedp:
// one browser for the package, a browser context (own cookies: one signed-in person) per caller.
// LANCECAT_TEST_CHROMIUM names the binary (make test sets it); without it the install script is
// asked (cached after the first time). No browser: the tests skip saying why, and fail under
// LANCECAT_REQUIRE_SERVICES=1 (make test).
//
// LANCECAT_CONSOLE_SCREENSHOTS=<dir> saves full-page screenshots of the main pages there (the
// README's come from docs/console).

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

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LANCECAT_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
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
	ctx := person(t)

	signIn(t, ctx, c.url, "")
	assert.Check(t, is.Contains(text(t, ctx, "#principal"), "anonymous"))
	tree := text(t, ctx, "#tree")
	for _, want := range []string{"analytics", "lake", "sales", "items"} {
		assert.Check(t, is.Contains(tree, want))
	}
	screenshot(t, ctx, "estate")

	// The table: schema, stats, and the row preview (the query door's Arrow, decoded).
	_, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#tree a[href*="table?id="]`)))
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
	rows := text(t, ctx, "#preview tbody")
	assert.Check(t, is.Contains(rows, "pear"))
	assert.Check(t, is.Contains(rows, "kiwi"))
	assert.Check(t, !strings.Contains(rows, "apple"), "the filter leaves apple out: %q", rows)
	screenshot(t, ctx, "table")

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
	assert.Check(t, !has(t, ctx, `#contents a[href*="table?id="]`), "gone from the contents")
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

	// Bob, with no grant, sees nothing, and learns nothing about what exists.
	signIn(t, bctx, c.url, bob)
	assert.Check(t, is.Equal(text(t, bctx, "#principal"), "user:bob"))
	assert.Check(t, has(t, bctx, "#empty"), "bob's estate is empty")
	assert.Check(t, !strings.Contains(text(t, bctx, "main"), "sales"))
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

	// Bob now sees the table (and the namespace above it), and its rows.
	open(t, bctx, c.url+"/console/")
	assert.Check(t, is.Contains(text(t, bctx, "#tree"), "items"))
	open(t, bctx, c.url+"/console/table?id="+url.QueryEscape("sales$items"))
	assert.Check(t, is.Contains(text(t, bctx, "#preview"), "apple"))
	// A reader cannot protect: the protection door's refusal, shown as it came.
	if has(t, bctx, "#protect-toggle") {
		submit(t, bctx, "#protect-toggle")
		assert.Check(t, strings.HasPrefix(text(t, bctx, "#flash-error"), "403 "))
	}

	// Ada revokes; bob is back to nothing.
	submit(t, actx, `#grants .revoke[data-subject="user:bob"]`)
	assert.Check(t, is.Contains(text(t, actx, "#flash"), "revoked user:bob reader"))
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
