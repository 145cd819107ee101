package conformance

// Concurrency beyond creates and renames, idempotent modes, and requests a server must refuse
// cleanly (each with the spec's code, nothing changed).

import (
	"net/url"
	"slices"
)

func concurrencyChecks() []check {
	return []check{
		{name: "8 concurrent inserts into one table: none lost (each succeeds or is 409 code 14)", ops: []string{"CreateTable", "InsertIntoTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 0); err != nil {
				return err
			}
			as := race(8, func(i int) answer { return t.post(t.w.tablePath(id, "insert"), rows(i*10, 10)) })
			won := 0
			for _, a := range as {
				if a.err == nil && a.status >= 200 && a.status < 300 {
					won++
				} else if err := fails(a, 14); err != nil {
					return err
				}
			}
			if err := expect(won > 0, "no insert succeeded"); err != nil {
				return err
			}
			return t.countIs(id, nil, won*10)
		}},
		{name: "8 concurrent creates of one tag: one winner, the rest 409 code 9", ops: []string{"CreateTable", "CreateTableTag"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			_, err := oneWinner(race(8, func(int) answer {
				return t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": "same", "version": 1})
			}), 9)
			return err
		}},
		{name: "8 concurrent creates of one branch: one winner, the rest 409 code 23", ops: []string{"CreateTable", "CreateTableBranch"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			_, err := oneWinner(race(8, func(int) answer {
				return t.post(t.w.tablePath(id, "branches/create"), map[string]any{"name": "same"})
			}), 23)
			return err
		}},
		{name: "8 concurrent declares of one table: one winner, the rest 409 code 5", ops: []string{"DeclareTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			_, err := oneWinner(race(8, func(int) answer { return t.post(t.w.tablePath(id, "declare"), map[string]any{}) }), 5)
			return err
		}},
		{name: "8 concurrent drops of one table: one winner, the rest 404 code 4", ops: []string{"CreateTable", "DropTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			_, err := oneWinner(race(8, func(int) answer { return t.post(t.w.tablePath(id, "drop"), map[string]any{}) }), 4)
			return err
		}},
	}
}

func refusalChecks() []check {
	return []check{
		{name: "create_table mode exist_ok keeps the table; mode overwrite replaces its rows", ops: []string{"CreateTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 3); err != nil {
				return err
			}
			return first(
				ok(t.postQ(t.w.tablePath(id, "create"), url.Values{"mode": {"exist_ok"}}, rows(0, 1)), nil),
				t.countIs(id, nil, 3),
				ok(t.postQ(t.w.tablePath(id, "create"), url.Values{"mode": {"overwrite"}}, rows(0, 5)), nil),
				t.countIs(id, nil, 5),
			)
		}},
		{name: "rename into another namespace; into a missing one is 404 code 1", ops: []string{"CreateNamespace", "CreateTable", "RenameTable", "CountTableRows"}, run: func(t *T) error {
			ns := t.id(t.name("ns"))
			id := t.id(t.name("t"))
			if err := first(t.mkNamespace(ns), t.mkTable(id, 2)); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.tablePath(id, "rename"), map[string]any{"new_table_name": "moved", "new_namespace_id": t.id(t.name("missing"))}), 1),
				ok(t.post(t.w.tablePath(id, "rename"), map[string]any{"new_table_name": "moved", "new_namespace_id": ns}), nil),
				t.countIs(append(slices.Clone(ns), "moved"), nil, 2),
			)
		}},
		{name: "a rename to a name holding the delimiter is 400 code 13", ops: []string{"CreateTable", "RenameTable", "TableExists"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.tablePath(id, "rename"), map[string]any{"new_table_name": "a" + t.w.delimiter + "b"}), 13),
				ok(t.post(t.w.tablePath(id, "exists"), map[string]any{}), nil),
			)
		}},
		{name: "an insert into a missing table is 404 code 4", ops: []string{"InsertIntoTable"}, run: func(t *T) error {
			return fails(t.post(t.w.tablePath(t.id(t.name("missing")), "insert"), rows(0, 1)), 4)
		}},
		{name: "a filter that does not parse is 400 code 13; one on a missing column 400 code 13 or 404 code 12", ops: []string{"CreateTable", "QueryTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 2); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.tablePath(id, "query"), map[string]any{"k": 10, "filter": "id >>= ("}), 13),
				fails(t.post(t.w.tablePath(id, "count_rows"), map[string]any{"predicate": "nope = 1"}), 12, 13),
			)
		}},
		{name: "an unknown index type is 400 code 13", ops: []string{"CreateTable", "CreateTableIndex"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 2); err != nil {
				return err
			}
			return fails(t.post(t.w.tablePath(id, "create_index"), map[string]any{"column": "id", "index_type": "NO_SUCH_TYPE"}), 13)
		}},
		{name: "a page token the server never issued answers a page or 400 code 13, never a 5xx", ops: []string{"ListNamespaces"}, run: func(t *T) error {
			// The spec leaves the token opaque: a server may read it as "start after" (lancecat does).
			a := t.get(t.w.nsPath(t.root, "list"), url.Values{"page_token": {"not-a-token-\x01"}})
			if a.err == nil && a.status >= 200 && a.status < 300 {
				var p listPage
				return ok(a, &p)
			}
			return fails(a, 13)
		}},
	}
}
