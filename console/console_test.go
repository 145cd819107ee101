package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestConsoleHTTP drives the console with plain HTTP, authorization off: the sign-in cookie's
// flags, the pages' content (every one made of door answers), and the CSRF rule on every form.
func TestConsoleHTTP(t *testing.T) {
	c := serve(t, nil)
	c.seed(t, "")
	hc := client(t)

	// Not signed in: a page sends to the sign-in form; a form post is refused.
	res, err := hc.Get(c.url + "/console/")
	assert.NilError(t, err)
	assert.Equal(t, res.StatusCode, http.StatusSeeOther)
	assert.Assert(t, strings.HasPrefix(res.Header.Get("Location"), "/console/login"))
	res, err = hc.PostForm(c.url+"/console/action/drop", url.Values{"id": {"sales$items"}})
	assert.NilError(t, err)
	assert.Equal(t, res.StatusCode, http.StatusUnauthorized)

	// Authorization off: an empty credential signs in (anonymous, the estate admin).
	res, err = hc.PostForm(c.url+"/console/login", url.Values{"credential": {""}, "next": {"/console/"}})
	assert.NilError(t, err)
	assert.Equal(t, res.StatusCode, http.StatusSeeOther)
	ck := res.Cookies()
	assert.Assert(t, is.Len(ck, 1))
	assert.Check(t, ck[0].HttpOnly)
	assert.Check(t, is.Equal(ck[0].SameSite, http.SameSiteStrictMode))
	assert.Check(t, is.Equal(ck[0].Path, "/console"))

	// A table of the root namespace (as LanceDB's remote mode creates them) is in the tree.
	c.do(t, "", http.MethodPost, "/v1/table/orders/create", "application/vnd.apache.arrow.stream", itemsArrow(t))
	res, err = hc.Get(c.url + "/console/")
	assert.NilError(t, err)
	page := body(t, res)
	assert.Check(t, is.Contains(page, `href="/console/table?id=orders"`))
	for _, want := range []string{"analytics", "lake", "sales", "items", "authorization disabled"} {
		assert.Check(t, is.Contains(page, want))
	}
	assert.Check(t, is.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'"))

	res, err = hc.Get(c.url + "/console/table?id=" + url.QueryEscape("sales$items") + "&filter=" + url.QueryEscape("id > 3"))
	assert.NilError(t, err)
	page = body(t, res)
	assert.Check(t, is.Contains(page, "<td>fig</td>"))
	assert.Check(t, is.Contains(page, "<td>kiwi</td>"))
	assert.Check(t, !strings.Contains(page, "<td>apple</td>"), "the filter keeps id <= 3 out")
	csrf := between(page, `name="csrf" value="`, `"`)
	assert.Assert(t, csrf != "")

	// A form without the token, or with another's, changes nothing.
	for _, token := range []string{"", "forged"} {
		res, err = hc.PostForm(c.url+"/console/action/protect", url.Values{"csrf": {token}, "kind": {"table"}, "id": {"sales$items"}, "protected": {"true"}})
		assert.NilError(t, err)
		assert.Check(t, is.Equal(res.StatusCode, http.StatusForbidden))
	}
	// A cross-origin form is refused even with the token.
	req, _ := http.NewRequest(http.MethodPost, c.url+"/console/action/protect", strings.NewReader(url.Values{"csrf": {csrf}, "kind": {"table"}, "id": {"sales$items"}, "protected": {"true"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, err = hc.Do(req)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.StatusCode, http.StatusForbidden))
	got := c.do(t, "", http.MethodGet, "/v1/table/sales$items/protection", "", nil)
	assert.Check(t, is.Contains(string(got), `"protected":false`))

	// With the token it goes through the protection door, and the page says so.
	res, err = hc.PostForm(c.url+"/console/action/protect", url.Values{"csrf": {csrf}, "kind": {"table"}, "id": {"sales$items"}, "protected": {"true"},
		"back": {"/console/table?id=sales%24items"}})
	assert.NilError(t, err)
	assert.Assert(t, is.Equal(res.StatusCode, http.StatusSeeOther))
	assert.Check(t, is.Contains(res.Header.Get("Location"), "flash="))
	got = c.do(t, "", http.MethodGet, "/v1/table/sales$items/protection", "", nil)
	assert.Check(t, is.Contains(string(got), `"protected":true`))

	// A dropped top-level namespace is restored from the estate page by its id.
	c.post(t, "", "/v1/namespace/top/create", map[string]any{})
	c.post(t, "", "/v1/namespace/top/drop", map[string]any{"behavior": "Cascade"})
	res, err = hc.PostForm(c.url+"/console/action/undrop", url.Values{"csrf": {csrf}, "kind": {"namespace"}, "id": {"top"}, "back": {"/console/"}})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(res.Header.Get("Location"), "flash=restored+namespace+top"), res.Header.Get("Location"))
	c.do(t, "", http.MethodPost, "/v1/namespace/top/describe", "application/json", []byte("{}"))

	// A post-sign-in redirect stays on the console.
	res, err = hc.PostForm(c.url+"/console/login", url.Values{"next": {"//evil.example/"}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Header.Get("Location"), "/console/"))
}

// TestConsoleOff: --console=false serves no console (the router answers /console as any unknown path).
func TestConsoleOff(t *testing.T) {
	c := serve(t, func(cfg *app.Config) { cfg.Console = false })
	res, err := http.Get(c.url + "/console/login")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.StatusCode, http.StatusNotFound))
}

// TestConsoleOrdinaryUser (issue 29, item 12): with authorization on, the estate page of a caller
// who may not list projects (an ordinary user: project listing is the estate admins') shows what
// they may see, with no raw refusal of a door they never asked for; with nothing granted it says
// whom to ask.
// csrfValue matches a form's CSRF token, which the refusal checks below must not read.
var csrfValue = regexp.MustCompile(`value="[0-9a-f]{64}"`)

// dataNumbers matches the tree's numbers for scripts (data-bytes="14035"): a size is no refusal either.
var dataNumbers = regexp.MustCompile(`data-(rows|bytes)="[0-9]*"`)

func TestConsoleOrdinaryUser(t *testing.T) {
	fga := testenv.OpenFGA(t)
	c := serve(t, func(cfg *app.Config) {
		cfg.Governance.Authz = app.AuthzOpenFGA
		cfg.Governance.OpenFGAURL = fga
		cfg.Governance.OpenFGAStore = fmt.Sprintf("console-user-%d", time.Now().UnixNano())
		cfg.Governance.EstateAdmins = "user:ada"
	})
	ada, bob := c.apiKey(t, "user:ada"), c.apiKey(t, "user:bob")
	c.seed(t, ada)
	c.do(t, ada, http.MethodPost, "/v1/table/orders/create", "application/vnd.apache.arrow.stream", itemsArrow(t))

	estate := func(t *testing.T, key string) string {
		t.Helper()
		hc := client(t)
		res, err := hc.PostForm(c.url+"/console/login", url.Values{"credential": {key}, "next": {"/console/"}})
		assert.NilError(t, err)
		assert.Equal(t, res.StatusCode, http.StatusSeeOther)
		res, err = hc.Get(c.url + "/console/")
		assert.NilError(t, err)
		assert.Equal(t, res.StatusCode, http.StatusOK)
		// The CSRF token is random hex and may itself contain "403"; it is no refusal.
		return dataNumbers.ReplaceAllString(csrfValue.ReplaceAllString(body(t, res), `value=""`), "")
	}

	page := estate(t, bob)
	assert.Check(t, !strings.Contains(page, "403"), page)
	assert.Check(t, !strings.Contains(page, "Permission denied"), page)
	assert.Check(t, is.Contains(page, `id="empty"`))
	assert.Check(t, is.Contains(page, "user:bob"), "the empty state names who is signed in")
	assert.Check(t, is.Contains(page, "estate admin"), "the empty state says whom to ask")
	assert.Check(t, !strings.Contains(page, "items") && !strings.Contains(page, "orders"))

	c.post(t, ada, "/v1/access/grant", map[string]any{"object_type": "table", "object_id": "sales$items", "subject": "user:bob", "relation": "reader"})
	c.post(t, ada, "/v1/access/grant", map[string]any{"object_type": "table", "object_id": "orders", "subject": "user:bob", "relation": "reader"})
	page = estate(t, bob)
	assert.Check(t, !strings.Contains(page, "403"), page)
	assert.Check(t, is.Contains(page, `href="/console/table?id=sales%24items"`), page)
	assert.Check(t, is.Contains(page, `href="/console/table?id=orders"`), page)
	assert.Check(t, !strings.Contains(page, `id="empty"`))

	// The estate admin sees the whole tree, projects included.
	page = estate(t, ada)
	for _, want := range []string{"analytics", "lake", "sales", "items", "orders"} {
		assert.Check(t, is.Contains(page, want))
	}
}
