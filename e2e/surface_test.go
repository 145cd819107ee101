package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// The surface test: every public method and option of the Node SDK (enumerated from the SDK's
// own type declarations, dist/*.d.ts, so a method a new SDK adds is noticed) run in remote mode
// against lancecat serve and embedded on a local directory, on the same inserts, and compared
// (scripts/e2e/surface/surface.mjs drives the SDK). Each case's verdict is one of
//
//	ok          the same answer (rows and values canonical, numbers within 1e-5, errors by kind)
//	differ      both answered, differently (or remote answered where embedded refused)
//	fail        remote failed where embedded answered
//	sdk-refused remote failed without the client sending a request for it (the SDK itself
//	            refuses the method in remote mode)
//	embedded-refused  remote answered a method the embedded SDK says it does not support
//
// Known gaps are in testdata/surface-gaps-<version>.json, each with its reason: a difference or
// failure not listed fails the test, and so does a listed case that now agrees, so the list
// only shrinks. A surface item no case covers must be listed under "unexercised" with a reason.
// LANCECAT_SURFACE_UPDATE=1 rewrites the files from what a run finds (new entries' reasons say
// NEW: and must be replaced by a reason before committing).

type surfaceCase struct {
	Name   string          `json:"name"`
	Covers []string        `json:"covers"`
	Value  json.RawMessage `json:"value"`
	Error  *string         `json:"error"`
	Sent   []string        `json:"sent"`
}

type surfaceOut struct {
	Version string        `json:"version"`
	Cases   []surfaceCase `json:"cases"`
}

// surfaceGaps is a version's expectations file.
type surfaceGaps struct {
	// Cases: case name → the verdict it has now and why
	Cases map[string]struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	} `json:"cases"`
	// Unexercised: surface item → why no case covers it
	Unexercised map[string]string `json:"unexercised"`
}

const (
	verdictOK         = "ok"
	verdictDiffer     = "differ"
	verdictFail       = "fail"
	verdictSDKRefused = "sdk-refused"
	// remote answers a method the embedded SDK says it does not support (rename_table in OSS,
	// enterprise-only branch diffs): not a gap of remote mode
	verdictEmbeddedRefused = "embedded-refused"
)

func TestSDKSurface(t *testing.T) {
	dirs := testenv.SDKs(t)
	for _, dir := range dirs {
		ver := testenv.SDKVersion(dir)
		t.Run(ver, func(t *testing.T) {
			surface := sdkSurface(t, dir)
			cfg, _ := seededRoot(t)
			proxy := countingProxy(t, serve(t, cfg))
			emb := runSurface(t, dir, map[string]any{"kind": "local", "dir": filepath.Join(t.TempDir(), "embedded")})
			rem := runSurface(t, dir, map[string]any{"kind": "remote", "url": proxy})
			gaps := loadSurfaceGaps(t, ver)
			checkSurface(t, ver, surface, emb, rem, gaps)
		})
	}
}

// countingProxy fronts the server at target, recording each request it forwards; it answers
// GET /__surface/count with how many it has forwarded and GET /__surface/log?from=N with the
// requests from the Nth on, so the script can tell a refusal of the SDK's own (nothing sent)
// from the server's.
func countingProxy(t *testing.T, target string) string {
	u, err := url.Parse(target)
	assert.NilError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/__surface/count":
			mu.Lock()
			n := len(log)
			mu.Unlock()
			fmt.Fprint(w, n)
			return
		case "/__surface/log":
			var from int
			fmt.Sscan(r.URL.Query().Get("from"), &from)
			mu.Lock()
			out := slices.Clone(log[min(from, len(log)):])
			mu.Unlock()
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		mu.Lock()
		log = append(log, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, sw.status))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// statusWriter remembers the status a response was sent with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func runSurface(t *testing.T, dir string, conn map[string]any) surfaceOut {
	t.Helper()
	var out surfaceOut
	testenv.NodeJSON(t, &out, testenv.Script("e2e", "surface", "surface.mjs"), dir, testenv.JobFile(t, map[string]any{"conn": conn}))
	return out
}

func loadSurfaceGaps(t *testing.T, ver string) surfaceGaps {
	t.Helper()
	var g surfaceGaps
	b, err := os.ReadFile(filepath.Join("testdata", "surface-gaps-"+ver+".json"))
	if os.IsNotExist(err) {
		return g
	}
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &g), "testdata/surface-gaps-%s.json", ver)
	return g
}

// sdkSurface is the SDK's public surface: "Class.member" for the methods and getters of its
// exported classes and "Interface.field" for the fields of its option interfaces, read from the
// SDK's dist/*.d.ts.
func sdkSurface(t *testing.T, dir string) []string {
	t.Helper()
	dist := filepath.Join(dir, "node_modules", "@lancedb", "lancedb", "dist")
	files, err := filepath.Glob(filepath.Join(dist, "*.d.ts"))
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0, "no type declarations in %s", dist)
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		assert.NilError(t, err)
		for _, item := range surfaceOf(filepath.Base(f), string(b)) {
			seen[item] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		// LocalTable implements Table: only what it adds is its own
		if m, ok := strings.CutPrefix(k, "LocalTable."); ok && seen["Table."+m] {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var (
	declRE   = regexp.MustCompile(`^export (?:declare (?:abstract )?class|interface) (\w+)`)
	memberRE = regexp.MustCompile(`^ {4}(?:(?:static|abstract|get|readonly) )*(#?\w+)(\??)(\(|<|:)`)
	// the classes of the SDK's public API; helpers (arrow conversion, header providers, caches,
	// the embedding registry) and the native layer's internals are not its surface.
	surfaceClasses = map[string]bool{
		"Connection": true, "Table": true, "LocalTable": true, "Branches": true, "QueryBase": true,
		"StandardQueryBase": true, "Query": true, "VectorQuery": true, "TakeQuery": true, "AutoQuery": true,
		"MergeInsertBuilder": true, "Index": true, "Job": true, "PermutationBuilder": true,
		"MaterializedView": true, "MatchQuery": true, "PhraseQuery": true, "BoostQuery": true,
		"MultiMatchQuery": true, "BooleanQuery": true,
	}
	surfaceInterfaces = map[string]bool{"ColumnAlteration": true, "FieldMetadataUpdate": true, "LsmWriteSpec": true, "ColumnOrdering": true}
	// interfaces named *Options that configure the client rather than a method's answer
	notSurfaceOptions = map[string]bool{"ScannableOptions": true, "JobEventsOptions": true, "TokenizeOptions": true}
)

// surfaceOf is the surface items one declaration file declares (native.d.ts: only Tags, the
// one class of the API declared there).
func surfaceOf(file, src string) []string {
	var out []string
	owner, class := "", false
	for line := range strings.SplitSeq(src, "\n") {
		if m := declRE.FindStringSubmatch(line); m != nil {
			name := m[1]
			class = strings.Contains(line, " class ")
			switch {
			case file == "native.d.ts" && name == "Tags":
				owner = name
			case file == "native.d.ts":
				owner = ""
			case class && surfaceClasses[name]:
				owner = name
			case !class && (surfaceInterfaces[name] || strings.HasSuffix(name, "Options") && !notSurfaceOptions[name]):
				owner = name
			default:
				owner = ""
			}
			continue
		}
		if strings.HasPrefix(line, "}") {
			owner = ""
			continue
		}
		if owner == "" {
			continue
		}
		if file == "native.d.ts" {
			line = "  " + line // native.d.ts indents by two
		}
		m := memberRE.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], "#") || m[1] == "constructor" || m[1] == "inner" {
			continue
		}
		if strings.Contains(line, "private ") || strings.Contains(line, "protected ") {
			continue
		}
		if class && m[3] == ":" && !strings.Contains(line, "get ") {
			continue // a class's field, not a method
		}
		out = append(out, owner+"."+m[1])
	}
	return out
}

// surfaceVerdict compares one case's embedded and remote answers.
func surfaceVerdict(emb, rem surfaceCase) (string, string) {
	switch {
	case emb.Error != nil && rem.Error != nil:
		if ek, rk := errorKind(*emb.Error), errorKind(*rem.Error); ek != rk {
			return verdictDiffer, fmt.Sprintf("error kind %s (%s), embedded %s (%s)", rk, short(*rem.Error), ek, short(*emb.Error))
		}
		return verdictOK, ""
	case rem.Error != nil && sdkRefused(*rem.Error, rem.Sent):
		return verdictSDKRefused, short(*rem.Error)
	case rem.Error != nil:
		return verdictFail, fmt.Sprintf("%s (sent %s)", short(*rem.Error), strings.Join(lastN(rem.Sent, 3), ", "))
	case emb.Error != nil && errorKind(*emb.Error) == "unsupported":
		return verdictEmbeddedRefused, "embedded: " + short(*emb.Error)
	case emb.Error != nil:
		return verdictDiffer, "answered where embedded failed: " + short(*emb.Error)
	}
	var e, r any
	if err := json.Unmarshal(emb.Value, &e); err != nil {
		return verdictFail, "embedded value: " + err.Error()
	}
	if err := json.Unmarshal(rem.Value, &r); err != nil {
		return verdictFail, "remote value: " + err.Error()
	}
	if p := jsonDiff("", e, r); p != "" {
		return verdictDiffer, p
	}
	return verdictOK, ""
}

// sdkRefused: the remote client's error is its own, not a server's answer: it names no request
// (every error the remote client makes of a response carries the response's request_id) and
// every request the case sent (its setup) was answered with success.
func sdkRefused(msg string, sent []string) bool {
	if strings.Contains(msg, "request_id") {
		return false
	}
	for _, s := range sent {
		if f := strings.Fields(s); len(f) == 3 && f[2] >= "400" {
			return false
		}
	}
	return true
}

func lastN(s []string, n int) []string { return s[max(0, len(s)-n):] }

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		return s[:237] + "..."
	}
	return s
}

// errorKind is the class of an error both modes can be compared by (their messages differ:
// one is Lance's, the other the server's as the remote client words it).
func errorKind(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "already exists"), strings.Contains(m, "conflict"):
		return "already-exists"
	case strings.Contains(m, "not found"), strings.Contains(m, "does not exist"), strings.Contains(m, "no such"),
		strings.Contains(m, "not exist"), strings.Contains(m, "no field named"), strings.Contains(m, "no column"):
		return "not-found"
	case strings.Contains(m, "not supported"), strings.Contains(m, "unsupported"), strings.Contains(m, "not implemented"):
		return "unsupported"
	}
	return "error"
}

// jsonDiff is "" when got equals want (numbers within a relative 1e-5), else where they differ.
func jsonDiff(at string, want, got any) string {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-5*math.Max(1, math.Abs(w)) {
			return fmt.Sprintf("%s: %s, embedded %s", at, cut(got), cut(want))
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %s, embedded %s", at, cut(got), cut(want))
		}
		for i := range w {
			if p := jsonDiff(fmt.Sprintf("%s[%d]", at, i), w[i], g[i]); p != "" {
				return p
			}
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %s, embedded %s", at, cut(got), cut(want))
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			if p := jsonDiff(at+"."+k, w[k], g[k]); p != "" {
				return p
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: %s, embedded %s", at, cut(got), cut(want))
		}
	}
	return ""
}

func cut(v any) string {
	b, _ := json.Marshal(v)
	return short(string(b))
}

// checkSurface reports every case's verdict, fails on what the gaps file does not expect, and
// prints the counts.
func checkSurface(t *testing.T, ver string, surface []string, emb, rem surfaceOut, gaps surfaceGaps) {
	t.Helper()
	inSurface := map[string]bool{}
	for _, s := range surface {
		inSurface[s] = true
	}
	update := os.Getenv("LANCECAT_SURFACE_UPDATE") == "1"
	next := surfaceGaps{Cases: map[string]struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}{}, Unexercised: gaps.Unexercised}
	byName := map[string]surfaceCase{}
	for _, c := range emb.Cases {
		byName[c.Name] = c
	}
	covered := map[string]bool{}
	counts := map[string]int{}
	seen := map[string]bool{}
	total := 0
	for _, r := range rem.Cases {
		// a case of a method this version does not have is not its surface
		if !slices.ContainsFunc(r.Covers, func(s string) bool { return inSurface[s] }) {
			continue
		}
		e, ok := byName[r.Name]
		if !ok {
			t.Errorf("%s: case %q ran remote only", ver, r.Name)
			continue
		}
		if seen[r.Name] {
			t.Errorf("%s: case %q twice", ver, r.Name)
		}
		seen[r.Name] = true
		total++
		for _, s := range r.Covers {
			covered[s] = true
		}
		verdict, why := surfaceVerdict(e, r)
		counts[verdict]++
		gap, known := gaps.Cases[r.Name]
		if update && verdict != verdictOK && verdict != verdictSDKRefused && verdict != verdictEmbeddedRefused {
			reason := gap.Reason
			if !known || gap.Verdict != verdict {
				reason = "NEW: " + why
			}
			next.Cases[r.Name] = struct {
				Verdict string `json:"verdict"`
				Reason  string `json:"reason"`
			}{verdict, reason}
		}
		switch {
		case known && verdict == verdictOK:
			t.Errorf("%s: %s: agrees now; take it off testdata/surface-gaps-%s.json (was %s: %s)", ver, r.Name, ver, gap.Verdict, gap.Reason)
		case known && verdict != gap.Verdict:
			t.Errorf("%s: %s: %s (%s), listed as %s (%s)", ver, r.Name, verdict, why, gap.Verdict, gap.Reason)
		case known:
			t.Logf("%s: %s: %s, known gap (%s): %s", ver, r.Name, verdict, gap.Reason, why)
		case verdict == verdictOK:
			t.Logf("%s: %s: ok", ver, r.Name)
		case verdict == verdictSDKRefused, verdict == verdictEmbeddedRefused:
			t.Logf("%s: %s: %s: %s", ver, r.Name, verdict, why)
		default:
			t.Errorf("%s: %s: %s: %s", ver, r.Name, verdict, why)
		}
	}
	for name := range gaps.Cases {
		if !seen[name] {
			t.Errorf("%s: testdata/surface-gaps-%s.json lists %q, which is no case any more", ver, ver, name)
		}
	}
	if update {
		b, err := json.MarshalIndent(next, "", "  ")
		assert.NilError(t, err)
		assert.NilError(t, os.WriteFile(filepath.Join("testdata", "surface-gaps-"+ver+".json"), append(b, '\n'), 0o644))
		t.Logf("wrote testdata/surface-gaps-%s.json", ver)
	}
	var unexercised []string
	for _, s := range surface {
		reason, listed := gaps.Unexercised[s]
		switch {
		case covered[s] && listed:
			t.Errorf("%s: %s is covered now; take it off the unexercised list of testdata/surface-gaps-%s.json", ver, s, ver)
		case covered[s]:
		case listed:
			unexercised = append(unexercised, s+" ("+reason+")")
		default:
			t.Errorf("%s: %s (from the SDK's type declarations) has no case: add one to scripts/e2e/surface/surface.mjs", ver, s)
		}
	}
	for s := range gaps.Unexercised {
		if !inSurface[s] {
			t.Errorf("%s: testdata/surface-gaps-%s.json lists %s as unexercised, which is not in the surface", ver, ver, s)
		}
	}
	if len(unexercised) > 0 {
		t.Logf("%s: unexercised: %s", ver, strings.Join(unexercised, "; "))
	}
	t.Logf("SDK %s surface: %d items, %d covered; %d cases: %d ok, %d differ, %d fail, %d sdk-refused, %d embedded-refused",
		ver, len(surface), len(covered), total, counts[verdictOK], counts[verdictDiffer], counts[verdictFail], counts[verdictSDKRefused],
		counts[verdictEmbeddedRefused])
}
