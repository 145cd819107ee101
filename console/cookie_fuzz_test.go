package console

import (
	"strings"
	"testing"
)

// FuzzSessionCookies feeds the two cookie decoders (the session, the OIDC flow) whatever a
// browser could send: they must never panic, a flow read back must keep its next on the console
// (no open redirect), and an encoded flow must read back as itself.
func FuzzSessionCookies(f *testing.F) {
	for _, s := range []string{"k:key", "b:tok", "a:x", "o:1700000000:eyJ.x.y", "o::", "o:-1:t", "o:99999999999999999999:t",
		flow{state: "s", nonce: "n", verifier: "v", next: "/console/x"}.encode(), "a.b.c.d", "...", "YQ.Yg.Yw.Ly9ldmls"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if s, ok := parseSession(v); ok {
			if strings.HasPrefix(v, "o:") && (s.bearer == "" || s.expires <= 0) {
				t.Fatalf("an OIDC session without a token or expiry: %q", v)
			}
		}
		fl, ok := parseFlow(v)
		if !ok {
			return
		}
		if !strings.HasPrefix(fl.next, Prefix+"/") || strings.HasPrefix(fl.next, "//") {
			t.Fatalf("next %q leaves the console", fl.next)
		}
		back, ok := parseFlow(fl.encode())
		if !ok || back != fl {
			t.Fatalf("flow %+v does not read back (%+v)", fl, back)
		}
	})
}
