package conformance

// The capabilities, namespaces and tables groups.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lancecat/lancecat/client/nsclient"
)

func capabilityChecks() []check {
	return []check{
		{name: "GET /v1/capabilities lists each operation once, with method and path", run: func(t *T) error {
			if !t.caps.present {
				return skipf("the server has no capabilities document (%d)", t.caps.raw.status)
			}
			seen := map[string]bool{}
			for _, op := range t.caps.Operations {
				if op.ID == "" || op.Method == "" || !strings.HasPrefix(op.Path, "/v1/") {
					return fmt.Errorf("operation %+v lacks an id, a method or a /v1/ path", op)
				}
				if seen[op.ID] {
					return fmt.Errorf("operation %s listed twice", op.ID)
				}
				seen[op.ID] = true
			}
			return expect(len(seen) > 0, "no operations listed")
		}},
		{name: "every operation the capabilities call unbacked answers 406 code 0", run: func(t *T) error {
			if !t.caps.present {
				return skipf("the server has no capabilities document")
			}
			// A real namespace and table, so a door that looks before it refuses finds them.
			ns := t.id(t.name("ns"))
			if err := t.mkNamespace(ns); err != nil {
				return err
			}
			table := append(slices.Clone(ns), "t")
			if err := ok(t.post(t.w.tablePath(table, "create"), rows(0, 2)), nil); err != nil {
				return err
			}
			n := 0
			for _, op := range t.caps.Operations {
				if op.Backed {
					continue
				}
				id := table
				switch {
				case strings.HasPrefix(op.Path, "/v1/namespace/"):
					id = ns
				case strings.HasPrefix(op.Path, "/v1/materialized_view/"):
					id = append(slices.Clone(ns), "view")
				case strings.HasPrefix(op.Path, "/v1/transaction/"):
					id = append(slices.Clone(ns), "txn")
				}
				path := strings.NewReplacer("{id}", t.w.join(id), "{index_name}", "id_idx").Replace(op.Path)
				var body any
				if op.Method != http.MethodGet {
					body = map[string]any{}
				}
				if err := fails(t.w.do(t.ctx, op.Method, path, nil, body), 0); err != nil {
					return fmt.Errorf("%s: %w", op.ID, err)
				}
				n++
			}
			if n == 0 {
				return skipf("the server backs every operation")
			}
			return nil
		}},
	}
}

// listPage is one page of a list answer.
type listPage struct {
	Namespaces []string `json:"namespaces"`
	Tables     []string `json:"tables"`
	PageToken  *string  `json:"page_token"`
}

// paginate reads every page of the GET list at path with limit, checking each page holds at
// most limit items, and returns all items in order.
func (t *T) paginate(path string, limit int) ([]string, error) {
	var all []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			return nil, fmt.Errorf("%s: more than 1000 pages (a page token that never ends?)", path)
		}
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if token != "" {
			q.Set("page_token", token)
		}
		var p listPage
		if err := ok(t.get(path, q), &p); err != nil {
			return nil, err
		}
		items := append(p.Namespaces, p.Tables...)
		if len(items) > limit {
			return nil, fmt.Errorf("%s: a page with limit %d holds %d items", path, limit, len(items))
		}
		all = append(all, items...)
		if p.PageToken == nil || *p.PageToken == "" {
			return all, nil
		}
		if len(items) == 0 && pages > 0 {
			return nil, fmt.Errorf("%s: an empty page with a page token", path)
		}
		token = *p.PageToken
	}
}

// samePage checks the pages held exactly want (no duplicates, none missed), in any order.
func samePage(got, want []string) error {
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
		if seen[g] > 1 {
			return fmt.Errorf("listed twice across pages: %q (all: %q)", g, got)
		}
	}
	for _, w := range want {
		if seen[w] == 0 {
			return fmt.Errorf("missed across pages: %q (all: %q)", w, got)
		}
	}
	return expect(len(got) == len(want), "listed %q, want %q", got, want)
}

// race runs f(0..n-1) at once and returns the answers.
func race(n int, f func(i int) answer) []answer {
	out := make([]answer, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = f(i)
		}()
	}
	start.Done()
	done.Wait()
	return out
}

// oneWinner checks exactly one answer succeeded and every other is the spec's error with one of
// codes.
func oneWinner(as []answer, codes ...int) (int, error) {
	winner := -1
	for i, a := range as {
		if a.err == nil && a.status >= 200 && a.status < 300 {
			if winner >= 0 {
				return -1, fmt.Errorf("two winners: %s and %s", as[winner], a)
			}
			winner = i
			continue
		}
		if err := fails(a, codes...); err != nil {
			return -1, fmt.Errorf("a loser: %w", err)
		}
	}
	return winner, expect(winner >= 0, "no winner: %s", as[0])
}

func namespaceChecks() []check {
	return []check{
		{name: "create, describe, exists: success shapes, properties kept", ops: []string{"CreateNamespace", "DescribeNamespace", "NamespaceExists"}, run: func(t *T) error {
			id := t.id(t.name("ns"))
			var created nsclient.CreateNamespaceResponse
			if err := ok(t.post(t.w.nsPath(id, "create"), map[string]any{"properties": map[string]string{"owner": "conformance"}}), &created); err != nil {
				return err
			}
			var d nsclient.DescribeNamespaceResponse
			if err := ok(t.post(t.w.nsPath(id, "describe"), map[string]any{}), &d); err != nil {
				return err
			}
			if d.Properties != nil && (*d.Properties)["owner"] != "conformance" {
				return fmt.Errorf("describe answered properties %v, without owner=conformance", *d.Properties)
			}
			return ok(t.post(t.w.nsPath(id, "exists"), map[string]any{}), nil)
		}},
		{name: "a missing namespace: describe, exists, drop, list answer 404 code 1", ops: []string{"DescribeNamespace", "NamespaceExists", "DropNamespace", "ListNamespaces"}, run: func(t *T) error {
			id := t.id(t.name("missing"))
			return first(
				fails(t.post(t.w.nsPath(id, "describe"), map[string]any{}), 1),
				fails(t.post(t.w.nsPath(id, "exists"), map[string]any{}), 1),
				fails(t.post(t.w.nsPath(id, "drop"), map[string]any{}), 1),
				fails(t.get(t.w.nsPath(id, "list"), nil), 1),
			)
		}},
		{name: "create of an existing namespace is 409 code 2; mode ExistOk is idempotent", ops: []string{"CreateNamespace"}, run: func(t *T) error {
			id := t.id(t.name("ns"))
			if err := t.mkNamespace(id); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.nsPath(id, "create"), map[string]any{}), 2),
				ok(t.post(t.w.nsPath(id, "create"), map[string]any{"mode": "ExistOk"}), nil),
				ok(t.post(t.w.nsPath(id, "create"), map[string]any{"mode": "exist_ok"}), nil),
				ok(t.post(t.w.nsPath(id, "exists"), map[string]any{}), nil),
			)
		}},
		{name: "drop: a non-empty namespace is 409 code 3 and kept; mode Skip of a missing one succeeds", ops: []string{"CreateNamespace", "DropNamespace", "NamespaceExists"}, run: func(t *T) error {
			id := t.id(t.name("ns"))
			if err := first(t.mkNamespace(id), t.mkNamespace(append(slices.Clone(id), "child"))); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.nsPath(id, "drop"), map[string]any{}), 3),
				ok(t.post(t.w.nsPath(id, "exists"), map[string]any{}), nil),
				ok(t.post(t.w.nsPath(t.id(t.name("missing")), "drop"), map[string]any{"mode": "Skip"}), nil),
				ok(t.post(t.w.nsPath(append(slices.Clone(id), "child"), "drop"), map[string]any{}), nil),
				ok(t.post(t.w.nsPath(id, "drop"), map[string]any{}), nil),
				fails(t.post(t.w.nsPath(id, "exists"), map[string]any{}), 1),
			)
		}},
		{name: "list: limit 2 over 5 children pages through all, no duplicates or misses", ops: []string{"CreateNamespace", "ListNamespaces"}, run: func(t *T) error {
			parent := t.id(t.name("ns"))
			if err := t.mkNamespace(parent); err != nil {
				return err
			}
			var want []string
			for i := range 5 {
				name := fmt.Sprintf("c%d", i)
				want = append(want, name)
				if err := t.mkNamespace(append(slices.Clone(parent), name)); err != nil {
					return err
				}
			}
			got, err := t.paginate(t.w.nsPath(parent, "list"), 2)
			if err != nil {
				return err
			}
			return samePage(got, want)
		}},
		{name: "8 concurrent creates of one namespace: one winner, the rest 409 code 2", ops: []string{"CreateNamespace"}, run: func(t *T) error {
			id := t.id(t.name("ns"))
			_, err := oneWinner(race(8, func(int) answer { return t.post(t.w.nsPath(id, "create"), map[string]any{}) }), 2)
			return err
		}},
	}
}

// mkTable creates table id holding rows [0, n).
func (t *T) mkTable(id []string, n int) error {
	return ok(t.post(t.w.tablePath(id, "create"), rows(0, n)), nil)
}

func tableChecks() []check {
	return []check{
		{name: "create from Arrow IPC, describe, exists: success shapes", ops: []string{"CreateTable", "DescribeTable", "TableExists"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			var c nsclient.CreateTableResponse
			if err := ok(t.post(t.w.tablePath(id, "create"), rows(0, 3)), &c); err != nil {
				return err
			}
			var d nsclient.DescribeTableResponse
			if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{}), &d); err != nil {
				return err
			}
			if d.Location == nil || *d.Location == "" {
				return fmt.Errorf("describe answered no location")
			}
			if d.Version == nil || *d.Version < 1 {
				return fmt.Errorf("describe answered version %v, want ≥ 1", d.Version)
			}
			if d.Schema == nil || len(d.Schema.Fields) != 2 || d.Schema.Fields[0].Name != "id" || d.Schema.Fields[1].Name != "name" {
				b, _ := json.Marshal(d.Schema)
				return fmt.Errorf("describe answered schema %s, want fields id, name", b)
			}
			return ok(t.post(t.w.tablePath(id, "exists"), map[string]any{}), nil)
		}},
		{name: "declare: a declared table is described and listed", ops: []string{"DeclareTable", "DescribeTable", "ListTables"}, run: func(t *T) error {
			ns := t.id(t.name("ns"))
			if err := t.mkNamespace(ns); err != nil {
				return err
			}
			id := append(slices.Clone(ns), "declared")
			var d nsclient.DeclareTableResponse
			if err := ok(t.post(t.w.tablePath(id, "declare"), map[string]any{}), &d); err != nil {
				return err
			}
			if d.Location == nil || *d.Location == "" {
				return fmt.Errorf("declare answered no location")
			}
			got, err := t.paginate(t.w.nsPath(ns, "table/list"), 10)
			if err != nil {
				return err
			}
			return first(samePage(got, []string{"declared"}), fails(t.post(t.w.tablePath(id, "declare"), map[string]any{}), 5))
		}},
		{name: "a missing table: describe, exists, drop answer 404 code 4", ops: []string{"DescribeTable", "TableExists", "DropTable"}, run: func(t *T) error {
			id := t.id(t.name("missing"))
			return first(
				fails(t.post(t.w.tablePath(id, "describe"), map[string]any{}), 4),
				fails(t.post(t.w.tablePath(id, "exists"), map[string]any{}), 4),
				fails(t.post(t.w.tablePath(id, "drop"), map[string]any{}), 4),
			)
		}},
		{name: "create in a missing namespace is 404 code 1", ops: []string{"CreateTable"}, run: func(t *T) error {
			return fails(t.post(t.w.tablePath(t.id(t.name("missing"), "t"), "create"), rows(0, 1)), 1)
		}},
		{name: "create of an existing table is 409 code 5 and keeps its rows", ops: []string{"CreateTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 3); err != nil {
				return err
			}
			return first(fails(t.post(t.w.tablePath(id, "create"), rows(0, 1)), 5), t.countIs(id, nil, 3))
		}},
		{name: "list: limit 2 over 5 tables pages through all, no duplicates or misses", ops: []string{"CreateTable", "ListTables"}, run: func(t *T) error {
			ns := t.id(t.name("ns"))
			if err := t.mkNamespace(ns); err != nil {
				return err
			}
			var want []string
			for i := range 5 {
				name := fmt.Sprintf("t%d", i)
				want = append(want, name)
				if err := t.mkTable(append(slices.Clone(ns), name), 1); err != nil {
					return err
				}
			}
			got, err := t.paginate(t.w.nsPath(ns, "table/list"), 2)
			if err != nil {
				return err
			}
			return samePage(got, want)
		}},
		{name: "rename: the table moves with its rows; onto an existing name is 409 code 5", ops: []string{"CreateTable", "RenameTable", "TableExists", "CountTableRows"}, run: func(t *T) error {
			from, to, other := t.name("from"), t.name("to"), t.name("other")
			if err := first(t.mkTable(t.id(from), 4), t.mkTable(t.id(other), 1)); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(t.id(from), "rename"), map[string]any{"new_table_name": to}), nil),
				fails(t.post(t.w.tablePath(t.id(from), "exists"), map[string]any{}), 4),
				t.countIs(t.id(to), nil, 4),
				fails(t.post(t.w.tablePath(t.id(to), "rename"), map[string]any{"new_table_name": other}), 5),
				t.countIs(t.id(other), nil, 1),
			)
		}},
		{name: "deregister: the table leaves the catalog", ops: []string{"CreateTable", "DeregisterTable", "TableExists"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			var d nsclient.DescribeTableResponse
			if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{}), &d); err != nil {
				return err
			}
			if err := first(
				ok(t.post(t.w.tablePath(id, "deregister"), map[string]any{}), nil),
				fails(t.post(t.w.tablePath(id, "exists"), map[string]any{}), 4),
			); err != nil {
				return err
			}
			// Deregister keeps the data: register it again (when the server can) so the run's
			// Cascade drop deletes it, leaving nothing of the run behind.
			if d.Location != nil && !t.caps.isUnbacked("RegisterTable") {
				_ = t.post(t.w.tablePath(id, "register"), map[string]any{"location": *d.Location})
			}
			return nil
		}},
		{name: "drop: the table is gone; a second drop is 404 code 4", ops: []string{"CreateTable", "DropTable", "TableExists"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "drop"), map[string]any{}), nil),
				fails(t.post(t.w.tablePath(id, "exists"), map[string]any{}), 4),
				fails(t.post(t.w.tablePath(id, "drop"), map[string]any{}), 4),
			)
		}},
		{name: "8 concurrent creates of one table: one winner, the rest 409 code 5", ops: []string{"CreateTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			w, err := oneWinner(race(8, func(i int) answer { return t.post(t.w.tablePath(id, "create"), rows(0, i+1)) }), 5)
			if err != nil {
				return err
			}
			return t.countIs(id, nil, w+1)
		}},
		{name: "8 concurrent renames of one table: one winner, the table under exactly one name", ops: []string{"CreateTable", "RenameTable", "TableExists"}, run: func(t *T) error {
			from := t.name("t")
			if err := t.mkTable(t.id(from), 2); err != nil {
				return err
			}
			names := make([]string, 8)
			for i := range names {
				names[i] = t.name("to")
			}
			w, err := oneWinner(race(8, func(i int) answer {
				return t.post(t.w.tablePath(t.id(from), "rename"), map[string]any{"new_table_name": names[i]})
			}), 4, 5, 14)
			if err != nil {
				return err
			}
			for i, n := range names {
				a := t.post(t.w.tablePath(t.id(n), "exists"), map[string]any{})
				if i == w {
					err = ok(a, nil)
				} else {
					err = fails(a, 4)
				}
				if err != nil {
					return err
				}
			}
			return fails(t.post(t.w.tablePath(t.id(from), "exists"), map[string]any{}), 4)
		}},
	}
}
