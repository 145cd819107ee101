// Package conformance is a runnable suite of the Lance Namespace REST contract: any server of
// the spec can be checked with it, since it speaks only HTTP (the generated spec client's types
// for the answers' shapes, raw requests where a check is about the wire itself: status, the
// problem body's numeric `code`, content types, path escaping).
//
// A run works against a fresh, possibly non-empty server: everything it makes lives under one
// namespace with a random name (conf_<hex>) that it drops (Cascade) at the end. It reads
// GET /v1/capabilities when the server has it, and skips the checks needing an operation the
// server says it does not back (or that the caller names in Config.SkipOps); on a server without
// capabilities every operation is assumed backed.
//
// What it checks, by group (Groups lists them; each check's name says what it proves):
//
//   - capabilities: the capabilities document's shape, and that every operation it calls unbacked
//     answers 406 with code 0 (the same with authorization on as off).
//   - namespaces: create/describe/exists/list/drop success shapes; the create modes (ExistOk is
//     idempotent); drop of a non-empty or missing namespace; pagination; one winner of 8
//     concurrent creates of the same id.
//   - tables: create (Arrow IPC), declare, describe, exists, list, rename, deregister, drop;
//     already-exists and not-found codes; pagination; one winner of 8 concurrent creates of the
//     same id and of 8 concurrent renames of one table.
//   - data: insert, count_rows, query (Arrow IPC answers, values checked), delete, update, a
//     schema mismatch refused.
//   - schema: add_columns (SQL expression), alter_columns (rename), drop_columns, schema and
//     field metadata, merge_insert, explain/analyze plans, list_all_tables, register after
//     deregister.
//   - versions: list (paginated), describe, restore, a missing version; tags create, list, get,
//     update, delete and their error codes; version/delete of a range; create_table_version of a
//     manifest that is not there refused with nothing made.
//   - indices: a scalar index created, listed, its stats described, dropped; a missing index.
//   - branches: create, list, write on a branch unseen on main, delete; the branch error codes.
//   - batch: batch_commit_tables all-or-nothing (a failing operation leaves nothing of the
//     batch), its transaction described; a missing transaction.
//   - concurrency: 8 concurrent inserts lose nothing; one winner of 8 concurrent creates of one
//     tag, one branch, 8 declares and 8 drops of one table.
//   - refusals: create_table's exist_ok and overwrite modes, rename across namespaces, and
//     requests refused with the spec's code (a delimiter in a new name, a missing table, a filter
//     that does not parse, an unknown index type, a forged page token).
//   - ids: the delimiter, unicode, empty, overlong and reserved names (each either refused with
//     400 code 13 and nothing made, or accepted and round-tripped), path escaping, malformed JSON.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Config is what a run talks to and what it runs.
type Config struct {
	// URL is the server's base URL (e.g. http://127.0.0.1:2333).
	URL string
	// Header is sent with every request (authentication: `Authorization: Bearer …`, `x-api-key`).
	Header http.Header
	// Delimiter joins an id's parts in a route's {id}; empty: the spec's default "$". A
	// non-default one is also sent as ?delimiter= on every request.
	Delimiter string
	// Only restricts the run to these groups (empty: all).
	Only []string
	// SkipOps are operation ids (the spec's operationId) to treat as unbacked even when the server
	// says it backs them (or has no capabilities document).
	SkipOps []string
	// Prefix names the run's namespace (default conf_<random hex>).
	Prefix string
	// HTTPClient sends the requests; nil: a client with a 60 s timeout.
	HTTPClient *http.Client
}

// Outcome is how a check ended.
type Outcome string

const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
)

// Result is one check's outcome.
type Result struct {
	Group    string        `json:"group"`
	Name     string        `json:"name"`
	Outcome  Outcome       `json:"outcome"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Report is a run's outcome.
type Report struct {
	URL       string   `json:"url"`
	Server    string   `json:"server,omitempty"`
	Spec      string   `json:"spec,omitempty"`
	Namespace string   `json:"namespace"`
	Results   []Result `json:"results"`
	Passed    int      `json:"passed"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"`
}

// OK reports whether no check failed.
func (r Report) OK() bool { return r.Failed == 0 }

// check is one check of the suite: the operations it needs (all must be backed, or it skips)
// and what it does.
type check struct {
	name string
	ops  []string
	run  func(t *T) error
}

// groups is the suite, in run order.
var groups = []struct {
	name   string
	checks func() []check
}{
	{"capabilities", capabilityChecks},
	{"namespaces", namespaceChecks},
	{"tables", tableChecks},
	{"data", dataChecks},
	{"schema", schemaChecks},
	{"versions", func() []check { return append(versionChecks(), versionExtraChecks()...) }},
	{"indices", indexChecks},
	{"branches", branchChecks},
	{"batch", batchChecks},
	{"ids", idChecks},
	{"concurrency", concurrencyChecks},
	{"refusals", refusalChecks},
}

// Groups are the suite's groups, in run order.
func Groups() []string {
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.name
	}
	return out
}

// errSkip makes a check skip (with the reason wrapped in it).
var errSkip = errors.New("skip")

func skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errSkip, fmt.Sprintf(format, args...))
}

// Run runs the suite against cfg.URL. The error is for a run that could not start (a bad
// config, a server that cannot make the run's namespace); failed checks are in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	for _, g := range cfg.Only {
		if !slices.Contains(Groups(), g) {
			return Report{}, fmt.Errorf("conformance: unknown group %q (groups: %s)", g, strings.Join(Groups(), ", "))
		}
	}
	if cfg.URL == "" {
		return Report{}, errors.New("conformance: no server URL")
	}
	if cfg.Delimiter == "" {
		cfg.Delimiter = "$"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Prefix == "" {
		var b [5]byte
		_, _ = rand.Read(b[:])
		cfg.Prefix = "conf_" + hex.EncodeToString(b[:])
	}
	w := &wire{base: strings.TrimSuffix(cfg.URL, "/"), header: cfg.Header, delimiter: cfg.Delimiter, hc: cfg.HTTPClient}
	rep := Report{URL: cfg.URL, Namespace: cfg.Prefix}
	caps, err := readCapabilities(ctx, w)
	if err != nil {
		return rep, err
	}
	rep.Server, rep.Spec = caps.Server, caps.specName()
	for _, op := range cfg.SkipOps {
		caps.unbacked[op] = "skipped by --skip-op"
	}
	// The run's namespace: every check works under it.
	root := []string{cfg.Prefix}
	a := w.do(ctx, "POST", w.nsPath(root, "create"), nil, map[string]any{})
	if a.err != nil || a.status != http.StatusOK {
		return rep, fmt.Errorf("conformance: cannot create the run's namespace %s: %s", cfg.Prefix, a)
	}
	for _, g := range groups {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, g.name) {
			continue
		}
		for _, c := range g.checks() {
			rep.Results = append(rep.Results, runCheck(ctx, w, caps, root, g.name, c))
		}
	}
	// Cleanup: the run's namespace and all below it.
	a = w.do(ctx, "POST", w.nsPath(root, "drop"), nil, map[string]any{"behavior": "Cascade"})
	cleanup := Result{Group: "cleanup", Name: "drop the run's namespace (Cascade)", Outcome: Pass}
	if a.err != nil || a.status != http.StatusOK && a.status != http.StatusNoContent {
		cleanup.Outcome, cleanup.Detail = Fail, a.String()
	}
	rep.Results = append(rep.Results, cleanup)
	for _, r := range rep.Results {
		switch r.Outcome {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		case Skip:
			rep.Skipped++
		}
	}
	return rep, nil
}

// runCheck runs one check, turning a panic into a failure so one broken answer cannot end the run.
func runCheck(ctx context.Context, w *wire, caps *capabilities, root []string, group string, c check) (res Result) {
	res = Result{Group: group, Name: c.name}
	for _, op := range c.ops {
		if why, ok := caps.unbacked[op]; ok {
			res.Outcome, res.Detail = Skip, op+" not backed: "+why
			return res
		}
	}
	start := time.Now()
	defer func() {
		res.Duration = time.Since(start)
		if p := recover(); p != nil {
			res.Outcome, res.Detail = Fail, fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	t := &T{ctx: ctx, w: w, caps: caps, root: root, group: group}
	err := c.run(t)
	switch {
	case err == nil:
		res.Outcome = Pass
	case errors.Is(err, errSkip):
		res.Outcome, res.Detail = Skip, strings.TrimPrefix(err.Error(), "skip: ")
	default:
		res.Outcome, res.Detail = Fail, err.Error()
	}
	return res
}
