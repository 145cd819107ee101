// Package console is lancecat's web console, served by `lancecat serve` at /console.
//
// Design: server-rendered pages (html/template, assets embedded in the binary) with a little
// progressive enhancement (a confirm on destructive buttons, the event stream polled in place);
// there is no JavaScript build step, so a fresh machine builds it with `go build` alone, every
// page works with scripts off, and the whole console is a few hundred lines to review.
//
// The console has no rights of its own and no private back door: every page and every action is
// made of calls to the same REST doors any client uses, entered through the router in-process
// with the signed-in caller's credential (an API key, or an OIDC bearer token, kept in an
// HttpOnly, SameSite=Strict cookie). So each call passes the same middleware (authentication,
// body bounds, access log, metrics) and the same guard chain (read-only mode, authorization,
// protection, shedding), listings are filtered as the API filters them, and a caller without a
// grant sees exactly what the API would tell them: the same 403 whether or not an object
// exists, never more.
//
// Two reads go past the doors, each only after a door let the caller see the object, and each
// answering no more than the caller could learn with their own credential: the access page asks
// the authorizer which rungs the caller holds and where from (authz.Explain, for the principal
// GET /v1/me names, on an object the caller may see: access.go), and the version timeline reads
// each version's Lance transaction from the location the describe door answered, as a Lance
// client would (history.go).
package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/authz"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Prefix is where the console is served.
const Prefix = "/console"

// cookieName holds the session: the caller's credential, never readable by page scripts.
const cookieName = "lancecat_console"

// Options configure the console.
type Options struct {
	// API is the router the console calls in-process (the same handler the listener serves).
	API http.Handler
	// Delimiter joins namespace and table id parts in door paths (the server's --delimiter).
	Delimiter string
	Logger    *slog.Logger
	// OIDC, when set, offers "Sign in with <issuer>" (oidc.go).
	OIDC *OIDCOptions
	// SecureCookies marks every cookie Secure (and the OIDC callback https) whatever the request
	// arrived as: for a console reached only over HTTPS through a proxy that terminates TLS.
	SecureCookies bool
	// TrustedProxies are the peers whose X-Forwarded-Proto: https is believed (https.go).
	TrustedProxies []*net.IPNet
	// Explainer answers a caller's own effective access on the access page (access.go); nil
	// (authorization off, or an authorizer that cannot) leaves that section out. It is asked
	// only for the principal GET /v1/me names for the session's credential.
	Explainer authz.Explainer
}

// Console serves the pages.
type Console struct {
	api   http.Handler
	delim string
	log   *slog.Logger
	tmpl  map[string]*template.Template
	mux   *http.ServeMux
	oidc  *oidcFlow // nil: no OIDC sign-in
	// explain is Options.Explainer.
	explain authz.Explainer

	secureCookies bool
	proxies       []*net.IPNet
}

// Mount answers /console and everything below it with the console, and sends a browser asking
// for / there (no door lives at /: every API path starts /v1/, /healthz or /readyz); anything
// else goes to next untouched.
func Mount(next http.Handler, opts Options) http.Handler {
	c := New(opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Prefix || strings.HasPrefix(r.URL.Path, Prefix+"/") {
			c.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			http.Redirect(w, r, Prefix+"/", http.StatusFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// New builds the console. The templates are parsed once; a template that does not parse is a
// build mistake, caught by every test that loads the package.
func New(opts Options) *Console {
	if opts.Delimiter == "" {
		opts.Delimiter = "$"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{api: opts.API, delim: opts.Delimiter, log: opts.Logger, tmpl: map[string]*template.Template{},
		secureCookies: opts.SecureCookies, proxies: opts.TrustedProxies, explain: opts.Explainer}
	if opts.OIDC != nil {
		c.oidc = newOIDCFlow(*opts.OIDC)
	}
	funcs := template.FuncMap{
		"join":     func(parts []string) string { return strings.Join(parts, c.delim) },
		"q":        url.QueryEscape,
		"last":     func(parts []string) string { return parts[len(parts)-1] },
		"bytes":    humanBytes,
		"millis":   formatMillis,
		"deref":    derefAny,
		"derefInt": derefAny,
		"pct":      percent,
		"summary":  taskSummary,
		// indent is a tree row's depth as a CSS class (the style sheet has 16; deeper rows line up
		// with the 16th: the CSP allows no inline style).
		"indent": func(d int) int { return min(d, 15) },
		"treeArgs": func(id string, rows []*treeRow) any {
			return struct {
				ID   string
				Rows []*treeRow
			}{id, rows}
		},
	}
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, p := range pages {
		name := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		c.tmpl[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", p))
	}
	mux := http.NewServeMux()
	static, _ := fs.Sub(assetFS, "assets")
	mux.Handle("GET "+Prefix+"/assets/", http.StripPrefix(Prefix+"/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET "+Prefix+"/login", c.loginPage)
	mux.HandleFunc("POST "+Prefix+"/login", c.login)
	mux.HandleFunc("POST "+Prefix+"/logout", c.signedIn(c.logout))
	if c.oidc != nil {
		mux.HandleFunc("GET "+Prefix+"/oidc/login", c.oidcLogin)
		mux.HandleFunc("GET "+Prefix+"/oidc/callback", c.oidcCallback)
	}
	mux.HandleFunc("GET "+Prefix+"/{$}", c.signedIn(c.estate))
	mux.HandleFunc("GET "+Prefix+"/namespace", c.signedIn(c.namespace))
	mux.HandleFunc("GET "+Prefix+"/table", c.signedIn(c.table))
	mux.HandleFunc("GET "+Prefix+"/access", c.signedIn(c.access))
	mux.HandleFunc("GET "+Prefix+"/warehouses", c.signedIn(c.warehouses))
	mux.HandleFunc("GET "+Prefix+"/events", c.signedIn(c.events))
	mux.HandleFunc("GET "+Prefix+"/events/poll", c.signedIn(c.eventsPoll))
	mux.HandleFunc("POST "+Prefix+"/action/{action}", c.signedIn(c.action))
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	c.mux = mux
	return c
}

// ServeHTTP serves a console request with headers that keep the pages to themselves: no framing,
// no script or style from anywhere else, nothing cached (pages show what one caller may see).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, Prefix+"/assets/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, c.markHTTPS(r))
}

// session is a signed-in caller: the credential presented on every call it makes.
type session struct {
	// cookie is the cookie's value: the CSRF token is derived from it.
	cookie string
	// apiKey or bearer is sent (x-api-key, Authorization: Bearer); neither: anonymous (only
	// useful with authorization off, where every caller is the anonymous estate admin).
	apiKey, bearer string
	// expires is when the credential stops working (Unix seconds; 0: unknown), for an OIDC
	// sign-in the ID token's exp: past it, the console sends the browser back to sign in.
	expires int64
}

// Cookie values: "k:<key>", "b:<token>", "o:<exp>:<ID token>" (an OIDC sign-in, oidc.go), or
// "a:<random>" (anonymous; the random part makes its CSRF token unguessable all the same).
func parseSession(v string) (session, bool) {
	s := session{cookie: v}
	switch {
	case strings.HasPrefix(v, "k:") && len(v) > 2:
		s.apiKey = v[2:]
	case strings.HasPrefix(v, "b:") && len(v) > 2:
		s.bearer = v[2:]
	case strings.HasPrefix(v, "o:"):
		exp, tok, ok := strings.Cut(v[2:], ":")
		n, err := strconv.ParseInt(exp, 10, 64)
		if !ok || err != nil || n <= 0 || tok == "" {
			return session{}, false
		}
		s.bearer, s.expires = tok, n
	case strings.HasPrefix(v, "a:") && len(v) > 2:
	default:
		return session{}, false
	}
	return s, true
}

// csrf is the token every form of the session carries: an HMAC keyed by the session's cookie,
// so it is the same on every replica (no server-side state) and no other site can compute it
// (it cannot read the HttpOnly cookie it would be derived from).
func (s session) csrf() string {
	m := hmac.New(sha256.New, []byte(s.cookie))
	m.Write([]byte("lancecat console csrf v1"))
	return hex.EncodeToString(m.Sum(nil))
}

func randomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: isHTTPS(r),
	})
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s session)

// signedIn runs h for a request with a session; without one a page goes to the sign-in form. A
// POST must also carry the session's CSRF token and, when the browser names it, come from this
// origin: the SameSite=Strict cookie already keeps other sites' forms out, these make sure.
func (c *Console) signedIn(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(cookieName)
		var s session
		ok := err == nil
		if ok {
			s, ok = parseSession(ck.Value)
		}
		expired := ok && c.expired(s)
		if expired {
			setSessionCookie(w, r, "", -1)
		}
		if !ok || expired {
			if r.Method != http.MethodGet {
				http.Error(w, "sign in first", http.StatusUnauthorized)
				return
			}
			to := Prefix + "/login?next=" + url.QueryEscape(r.URL.RequestURI())
			if expired {
				to += "&expired=1"
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
				http.Error(w, "cross-origin form refused", http.StatusForbidden)
				return
			}
			if !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.csrf())) {
				http.Error(w, "the form's CSRF token is missing or wrong: reload the page", http.StatusForbidden)
				return
			}
		}
		h(w, r, s)
	}
}

func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// localNext keeps a post-sign-in redirect on the console (never an open redirect).
func localNext(next string) string {
	if strings.HasPrefix(next, Prefix+"/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return Prefix + "/"
}
