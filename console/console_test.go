package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/server"
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

	res, err = hc.Get(c.url + "/console/")
	assert.NilError(t, err)
	page := body(t, res)
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
	c := serve(t, func(cfg *server.Config) { cfg.Console = false })
	res, err := http.Get(c.url + "/console/login")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.StatusCode, http.StatusNotFound))
}
