package conformance

// The ids group: what the spec leaves to a server (which names it accepts) is checked as "refused
// cleanly or accepted whole": a refused name is 400 code 13 and leaves nothing behind; an
// accepted one round-trips through list, describe and drop. Never a 5xx, never half-made.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// refusedOrWhole checks a name at the table and namespace doors: refused with 400 code 13 and
// not listed, or accepted and listed, described and dropped under exactly that name.
func (t *T) refusedOrWhole(name string) error {
	parent := t.id(t.name("ns"))
	if err := t.mkNamespace(parent); err != nil {
		return err
	}
	id := append(slices.Clone(parent), name)
	a := t.post(t.w.tablePath(id, "create"), rows(0, 1))
	if a.err == nil && a.status >= 500 {
		return fmt.Errorf("a server error: %s", a)
	}
	refused := a.err == nil && (a.status < 200 || a.status > 299)
	if refused {
		if err := fails(a, 13); err != nil {
			return err
		}
	}
	got, err := t.paginate(t.w.nsPath(parent, "table/list"), 100)
	if err != nil {
		return err
	}
	if refused {
		return expect(len(got) == 0, "refused, but listed: %q", got)
	}
	if err := first(samePage(got, []string{name}), t.countIs(id, nil, 1)); err != nil {
		return fmt.Errorf("accepted, but: %w", err)
	}
	if err := ok(t.post(t.w.tablePath(id, "drop"), map[string]any{}), nil); err != nil {
		return fmt.Errorf("accepted, but: %w", err)
	}
	// The namespace door answers the same way.
	a = t.post(t.w.nsPath(id, "create"), map[string]any{})
	if a.err == nil && a.status >= 500 {
		return fmt.Errorf("a server error: %s", a)
	}
	if a.status < 200 || a.status > 299 {
		return fails(a, 13)
	}
	return ok(t.post(t.w.nsPath(id, "drop"), map[string]any{}), nil)
}

func idChecks() []check {
	return []check{
		{name: "unicode names round-trip through create, list, describe, drop", ops: []string{"CreateNamespace", "CreateTable", "ListTables", "CountTableRows", "DropTable"}, run: func(t *T) error {
			parent := t.id(t.name("ns"), "ünïcødé-日本")
			if err := first(t.mkNamespace(parent[:len(parent)-1]), t.mkNamespace(parent)); err != nil {
				return err
			}
			id := append(slices.Clone(parent), "café_表 x")
			if err := t.mkTable(id, 2); err != nil {
				return err
			}
			got, err := t.paginate(t.w.nsPath(parent, "table/list"), 10)
			if err != nil {
				return err
			}
			return first(samePage(got, []string{"café_表 x"}), t.countIs(id, nil, 2),
				ok(t.post(t.w.tablePath(id, "drop"), map[string]any{}), nil))
		}},
		{name: "the delimiter in a route's id separates levels: a missing level is 404 code 1", ops: []string{"CreateTable", "NamespaceExists"}, run: func(t *T) error {
			// <run>$<missing>$t: the server must read the delimiter as a level, not as part of a name.
			id := t.id(t.name("missing"), "t")
			return first(
				fails(t.post(t.w.tablePath(id, "create"), rows(0, 1)), 1),
				fails(t.post(t.w.nsPath(id[:len(id)-1], "exists"), map[string]any{}), 1),
			)
		}},
		{name: "the root namespace (the delimiter alone) lists the run's namespace", ops: []string{"ListNamespaces"}, run: func(t *T) error {
			got, err := t.paginate(t.w.nsPath(nil, "list"), 100)
			if err != nil {
				return err
			}
			return expect(slices.Contains(got, t.root[0]), "the root's %d children do not hold %s", len(got), t.root[0])
		}},
		{name: "an empty name is 400 code 13", ops: []string{"CreateTable", "CreateNamespace"}, run: func(t *T) error {
			return first(
				fails(t.post(t.w.tablePath(t.id(""), "create"), rows(0, 1)), 13),
				fails(t.post(t.w.nsPath(t.id("", "x"), "create"), map[string]any{}), 13),
				fails(t.post(t.w.tablePath(t.id("t"), "rename"), map[string]any{"new_table_name": ""}), 4, 13),
			)
		}},
		{name: "an overlong (1000-byte) name is refused cleanly or accepted whole", ops: []string{"CreateNamespace", "CreateTable", "ListTables", "DropTable"}, run: func(t *T) error {
			return t.refusedOrWhole(strings.Repeat("x", 1000))
		}},
		{name: "reserved names (., .., control characters) are refused cleanly or accepted whole", ops: []string{"CreateNamespace", "CreateTable", "ListTables", "DropTable"}, run: func(t *T) error {
			for _, name := range []string{".", "..", "a\x01b", "tab\tname", "cafe\u0301", "zero\u200bwidth"} {
				if err := t.refusedOrWhole(name); err != nil {
					return fmt.Errorf("%q: %w", name, err)
				}
			}
			return nil
		}},
		{name: "malformed JSON is 400 code 13", ops: []string{"CreateNamespace", "DescribeTable"}, run: func(t *T) error {
			return first(
				fails(t.post(t.w.nsPath(t.id(t.name("ns")), "create"), rawJSON(`{"properties":`)), 13),
				fails(t.post(t.w.tablePath(t.id(t.name("t")), "describe"), rawJSON(`[1,`)), 13),
			)
		}},
		{name: "errors are JSON with the spec's numeric code and its status", run: func(t *T) error {
			a := t.w.do(t.ctx, http.MethodPost, t.w.tablePath(t.id(t.name("missing")), "describe"), nil, map[string]any{})
			return fails(a, 4)
		}},
	}
}
