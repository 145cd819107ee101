package console

// Whether the browser reached us over HTTPS, which decides the cookies' Secure flag and the OIDC
// callback's scheme. Behind a proxy that terminates TLS the request arrives as plain HTTP, so
// r.TLS alone would send the session cookie without Secure. Two ways to say otherwise, both safe:
// an explicit setting (SecureCookies: every cookie is Secure, as it should be on a site served
// only over HTTPS), or X-Forwarded-Proto: https from a peer in TrustedProxies. The header is never
// believed from anyone else: a client could set it (it would only tighten its own cookie, but the
// OIDC redirect's scheme must not be the client's to choose).

import (
	"context"
	"net"
	"net/http"
	"strings"
)

type httpsKey struct{}

// markHTTPS notes on r's context that the browser's connection is HTTPS when it is.
func (c *Console) markHTTPS(r *http.Request) *http.Request {
	if r.TLS == nil && (c.secureCookies || forwardedHTTPS(r, c.proxies)) {
		return r.WithContext(context.WithValue(r.Context(), httpsKey{}, true))
	}
	return r
}

// isHTTPS reports whether the browser reached us over HTTPS (directly, or as markHTTPS found).
func isHTTPS(r *http.Request) bool {
	v, _ := r.Context().Value(httpsKey{}).(bool)
	return v || r.TLS != nil
}

// forwardedHTTPS reports whether a trusted proxy (the direct peer, in proxies) says the client
// connected over HTTPS. The last X-Forwarded-Proto value is the one the peer itself set (a proxy
// that appends puts its own last; one that overwrites leaves only its own).
func forwardedHTTPS(r *http.Request, proxies []*net.IPNet) bool {
	if len(proxies) == 0 {
		return false
	}
	vals := r.Header.Values("X-Forwarded-Proto")
	if len(vals) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	trusted := false
	for _, p := range proxies {
		if p.Contains(ip) {
			trusted = true
			break
		}
	}
	if !trusted {
		return false
	}
	last := vals[len(vals)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}
