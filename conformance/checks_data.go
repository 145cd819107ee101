package conformance

// The data, versions, indices, branches and batch groups.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/lancecat/lancecat/client/nsclient"
)

// countIs checks count_rows of id (with extra fields in its body: version, branch, predicate)
// answers want.
func (t *T) countIs(id []string, extra map[string]any, want int) error {
	body := map[string]any{}
	for k, v := range extra {
		body[k] = v
	}
	a := t.post(t.w.tablePath(id, "count_rows"), body)
	var n int64
	if err := ok(a, &n); err != nil {
		return err
	}
	return expect(n == int64(want), "count_rows %v answered %d, want %d", extra, n, want)
}

// queryIDs runs a query and returns the id column of its Arrow answer.
func (t *T) queryIDs(id []string, body map[string]any) ([]int64, error) {
	if _, ok := body["k"]; !ok {
		body["k"] = 1000
	}
	a := t.post(t.w.tablePath(id, "query"), body)
	if err := ok(a, nil); err != nil {
		return nil, err
	}
	got, err := readIDs(a.body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a, err)
	}
	return got, nil
}

func (t *T) idsAre(id []string, body map[string]any, want []int64) error {
	got, err := t.queryIDs(id, body)
	if err != nil {
		return err
	}
	return expect(slices.Equal(got, want), "query %v answered ids %v, want %v", body, got, want)
}

func dataChecks() []check {
	return []check{
		{name: "insert appends and answers a newer version; count_rows counts", ops: []string{"CreateTable", "InsertIntoTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			var c nsclient.CreateTableResponse
			if err := ok(t.post(t.w.tablePath(id, "create"), rows(0, 3)), &c); err != nil {
				return err
			}
			var ins nsclient.InsertIntoTableResponse
			if err := ok(t.post(t.w.tablePath(id, "insert"), rows(3, 4)), &ins); err != nil {
				return err
			}
			if c.Version != nil && ins.Version != nil && *ins.Version <= *c.Version {
				return fmt.Errorf("insert answered version %d, not after create's %d", *ins.Version, *c.Version)
			}
			return t.countIs(id, nil, 7)
		}},
		{name: "query answers Arrow IPC with the rows: filter, k, columns", ops: []string{"CreateTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 10); err != nil {
				return err
			}
			got, err := t.queryIDs(id, map[string]any{"k": 3})
			if err != nil {
				return err
			}
			return first(
				expect(len(got) == 3, "k 3 answered %d rows", len(got)),
				t.idsAre(id, map[string]any{}, seq(0, 10)),
				t.idsAre(id, map[string]any{"filter": "id >= 7"}, seq(7, 10)),
				t.idsAre(id, map[string]any{"filter": "name = 'row4'", "columns": map[string]any{"column_names": []string{"id"}}}, seq(4, 5)),
			)
		}},
		{name: "a vector query answers the k nearest rows", ops: []string{"CreateTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := ok(t.post(t.w.tablePath(id, "create"), vectorRows(10)), nil); err != nil {
				return err
			}
			return first(
				t.idsAre(id, map[string]any{"k": 2, "vector": map[string]any{"single_vector": []float32{3.1, 0}}, "vector_column": "vec"}, []int64{3, 4}),
				t.idsAre(id, map[string]any{"k": 3, "vector": map[string]any{"single_vector": []float32{8.8, 0}}, "vector_column": "vec", "filter": "id < 8", "prefilter": true}, []int64{5, 6, 7}),
			)
		}},
		{name: "count_rows with a predicate counts the matching rows", ops: []string{"CreateTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 10); err != nil {
				return err
			}
			return t.countIs(id, map[string]any{"predicate": "id < 4"}, 4)
		}},
		{name: "delete removes exactly the rows of its predicate", ops: []string{"CreateTable", "DeleteFromTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 6); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "delete"), map[string]any{"predicate": "id >= 2 AND id < 4"}), nil),
				t.idsAre(id, map[string]any{}, []int64{0, 1, 4, 5}),
			)
		}},
		{name: "update sets values where its predicate holds", ops: []string{"CreateTable", "UpdateTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 4); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "update"), map[string]any{"predicate": "id = 1", "updates": [][]string{{"name", "'changed'"}}}), nil),
				t.idsAre(id, map[string]any{"filter": "name = 'changed'"}, []int64{1}),
				t.idsAre(id, map[string]any{}, seq(0, 4)),
			)
		}},
		{name: "insert mode overwrite replaces the rows", ops: []string{"CreateTable", "InsertIntoTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 4); err != nil {
				return err
			}
			return first(
				ok(t.postQ(t.w.tablePath(id, "insert"), url.Values{"mode": {"overwrite"}}, rows(100, 2)), nil),
				t.idsAre(id, map[string]any{}, seq(100, 102)),
			)
		}},
		{name: "an insert of another schema is refused (400 code 13 or 20) and writes nothing", ops: []string{"CreateTable", "InsertIntoTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 2); err != nil {
				return err
			}
			return first(fails(t.post(t.w.tablePath(id, "insert"), otherRows()), 13, 20), t.countIs(id, nil, 2))
		}},
		{name: "a table's stats count its rows", ops: []string{"CreateTable", "GetTableStats"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 5); err != nil {
				return err
			}
			var s nsclient.GetTableStatsResponse
			if err := ok(t.post(t.w.tablePath(id, "stats"), map[string]any{}), &s); err != nil {
				return err
			}
			return expect(s.NumRows == 5, "stats answered num_rows %d, want 5", s.NumRows)
		}},
	}
}

// versioned makes a table with three versions: 2 rows, then 3 more, then 4 more.
func (t *T) versioned() ([]string, error) {
	id := t.id(t.name("t"))
	return id, first(
		t.mkTable(id, 2),
		ok(t.post(t.w.tablePath(id, "insert"), rows(2, 3)), nil),
		ok(t.post(t.w.tablePath(id, "insert"), rows(5, 4)), nil),
	)
}

// versionPage is one page of list_table_versions.
type versionPage struct {
	Versions []struct {
		Version int64 `json:"version"`
	} `json:"versions"`
	PageToken *string `json:"page_token"`
}

func versionChecks() []check {
	return []check{
		{name: "list_table_versions: limit 1 pages through every version once", ops: []string{"CreateTable", "InsertIntoTable", "ListTableVersions"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			var got []int64
			token := ""
			for pages := 0; pages < 20; pages++ {
				q := url.Values{"limit": {"1"}}
				if token != "" {
					q.Set("page_token", token)
				}
				var p versionPage
				if err := ok(t.postQ(t.w.tablePath(id, "version/list"), q, map[string]any{}), &p); err != nil {
					return err
				}
				if len(p.Versions) > 1 {
					return fmt.Errorf("a page with limit 1 holds %d versions", len(p.Versions))
				}
				for _, v := range p.Versions {
					got = append(got, v.Version)
				}
				if p.PageToken == nil || *p.PageToken == "" {
					break
				}
				token = *p.PageToken
			}
			slices.Sort(got)
			return expect(slices.Equal(got, []int64{1, 2, 3}), "versions across pages %v, want [1 2 3]", got)
		}},
		{name: "describe_table_version; a missing version is 404 code 11", ops: []string{"CreateTable", "InsertIntoTable", "DescribeTableVersion"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			var d nsclient.DescribeTableVersionResponse
			if err := ok(t.post(t.w.tablePath(id, "version/describe"), map[string]any{"version": 2}), &d); err != nil {
				return err
			}
			return first(
				expect(d.Version.Version == 2, "describe of version 2 answered %d", d.Version.Version),
				fails(t.post(t.w.tablePath(id, "version/describe"), map[string]any{"version": 99}), 11),
			)
		}},
		{name: "reads at a version: count_rows and describe_table of version 1", ops: []string{"CreateTable", "InsertIntoTable", "CountTableRows", "DescribeTable"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			var d nsclient.DescribeTableResponse
			if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{"version": 1}), &d); err != nil {
				return err
			}
			return first(
				expect(d.Version != nil && *d.Version == 1, "describe at version 1 answered version %v", d.Version),
				t.countIs(id, map[string]any{"version": 1}, 2),
				t.countIs(id, nil, 9),
				fails(t.post(t.w.tablePath(id, "describe"), map[string]any{"version": 99}), 11),
			)
		}},
		{name: "restore makes an old version the latest", ops: []string{"CreateTable", "InsertIntoTable", "RestoreTable", "CountTableRows"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			return first(ok(t.post(t.w.tablePath(id, "restore"), map[string]any{"version": 2}), nil), t.countIs(id, nil, 5))
		}},
		{name: "tags: create, list, get version, update, delete", ops: []string{"CreateTable", "InsertIntoTable", "CreateTableTag", "ListTableTags", "GetTableTagVersion", "UpdateTableTag", "DeleteTableTag"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": "v1", "version": 1}), nil); err != nil {
				return err
			}
			var l nsclient.ListTableTagsResponse
			if err := ok(t.post(t.w.tablePath(id, "tags/list"), map[string]any{}), &l); err != nil {
				return err
			}
			if tc, ok := l.Tags["v1"]; !ok || tc.Version != 1 {
				return fmt.Errorf("tags/list answered %+v, want v1 at version 1", l.Tags)
			}
			var g nsclient.GetTableTagVersionResponse
			if err := ok(t.post(t.w.tablePath(id, "tags/version"), map[string]any{"tag": "v1"}), &g); err != nil {
				return err
			}
			if g.Version != 1 {
				return fmt.Errorf("tags/version answered %d, want 1", g.Version)
			}
			if err := ok(t.post(t.w.tablePath(id, "tags/update"), map[string]any{"tag": "v1", "version": 2}), nil); err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "tags/version"), map[string]any{"tag": "v1"}), &g); err != nil {
				return err
			}
			return first(
				expect(g.Version == 2, "after update tags/version answered %d, want 2", g.Version),
				t.countIs(id, map[string]any{"version": g.Version}, 5),
				ok(t.post(t.w.tablePath(id, "tags/delete"), map[string]any{"tag": "v1"}), nil),
				fails(t.post(t.w.tablePath(id, "tags/version"), map[string]any{"tag": "v1"}), 8),
			)
		}},
		{name: "tags: an existing tag is 409 code 9; a missing one 404 code 8; a missing version 404 code 11", ops: []string{"CreateTable", "CreateTableTag", "DeleteTableTag", "UpdateTableTag"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": "a", "version": 1}), nil),
				fails(t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": "a", "version": 1}), 9),
				fails(t.post(t.w.tablePath(id, "tags/delete"), map[string]any{"tag": "nope"}), 8),
				fails(t.post(t.w.tablePath(id, "tags/update"), map[string]any{"tag": "nope", "version": 1}), 8),
				fails(t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": "b", "version": 99}), 11),
			)
		}},
		{name: "tags list: limit 1 pages through 3 tags once", ops: []string{"CreateTable", "InsertIntoTable", "CreateTableTag", "ListTableTags"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			for i := 1; i <= 3; i++ {
				if err := ok(t.post(t.w.tablePath(id, "tags/create"), map[string]any{"tag": fmt.Sprintf("t%d", i), "version": i}), nil); err != nil {
					return err
				}
			}
			var got []string
			token := ""
			for pages := 0; pages < 20; pages++ {
				q := url.Values{"limit": {"1"}}
				if token != "" {
					q.Set("page_token", token)
				}
				var l nsclient.ListTableTagsResponse
				if err := ok(t.postQ(t.w.tablePath(id, "tags/list"), q, map[string]any{}), &l); err != nil {
					return err
				}
				if len(l.Tags) > 1 {
					return fmt.Errorf("a page with limit 1 holds %d tags", len(l.Tags))
				}
				for name := range l.Tags {
					got = append(got, name)
				}
				if l.PageToken == nil || *l.PageToken == "" {
					break
				}
				token = *l.PageToken
			}
			return samePage(got, []string{"t1", "t2", "t3"})
		}},
	}
}

func indexChecks() []check {
	return []check{
		{name: "a BTREE index: created, listed, stats described, dropped", ops: []string{"CreateTable", "CreateTableIndex", "ListTableIndices", "DescribeTableIndexStats", "DropTableIndex"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 50); err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "create_index"), map[string]any{"column": "id", "index_type": "BTREE", "name": "id_idx"}), nil); err != nil {
				return err
			}
			// An index may be built in the background: wait for it to be listed.
			var l nsclient.ListTableIndicesResponse
			deadline := time.Now().Add(30 * time.Second)
			for {
				if err := ok(t.post(t.w.tablePath(id, "index/list"), map[string]any{}), &l); err != nil {
					return err
				}
				if slices.ContainsFunc(l.Indexes, func(ix nsclient.IndexContent) bool { return ix.IndexName == "id_idx" }) {
					break
				}
				if time.Now().After(deadline) {
					b, _ := json.Marshal(l)
					return fmt.Errorf("id_idx not listed after 30 s: %s", b)
				}
				time.Sleep(100 * time.Millisecond)
			}
			var s nsclient.DescribeTableIndexStatsResponse
			if err := ok(t.post(t.w.tablePath(id, "index/id_idx/stats"), map[string]any{}), &s); err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "index/id_idx/drop"), map[string]any{}), nil); err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "index/list"), map[string]any{}), &l); err != nil {
				return err
			}
			return expect(!slices.ContainsFunc(l.Indexes, func(ix nsclient.IndexContent) bool { return ix.IndexName == "id_idx" }), "id_idx still listed after its drop")
		}},
		{name: "a missing index: stats and drop answer 404 code 6", ops: []string{"CreateTable", "DescribeTableIndexStats", "DropTableIndex"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return first(
				fails(t.post(t.w.tablePath(id, "index/nope/stats"), map[string]any{}), 6),
				fails(t.post(t.w.tablePath(id, "index/nope/drop"), map[string]any{}), 6),
			)
		}},
		{name: "an index on a missing column is 404 code 12 or 400 code 13", ops: []string{"CreateTable", "CreateTableIndex"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return fails(t.post(t.w.tablePath(id, "create_index"), map[string]any{"column": "nope", "index_type": "BTREE"}), 12, 13)
		}},
	}
}

func branchChecks() []check {
	return []check{
		{name: "a branch: created, listed, written without changing main, deleted", ops: []string{"CreateTable", "CreateTableBranch", "ListTableBranches", "InsertIntoTable", "CountTableRows", "DeleteTableBranch"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 3); err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "branches/create"), map[string]any{"name": "dev"}), nil); err != nil {
				return err
			}
			var l nsclient.ListTableBranchesResponse
			if err := ok(t.post(t.w.tablePath(id, "branches/list"), map[string]any{}), &l); err != nil {
				return err
			}
			if _, ok := l.Branches["dev"]; !ok {
				return fmt.Errorf("branches/list answered %v, without dev", l.Branches)
			}
			return first(
				ok(t.postQ(t.w.tablePath(id, "insert"), url.Values{"branch": {"dev"}}, rows(3, 2)), nil),
				t.countIs(id, map[string]any{"branch": "dev"}, 5),
				t.countIs(id, nil, 3),
				ok(t.post(t.w.tablePath(id, "branches/delete"), map[string]any{"name": "dev"}), nil),
				fails(t.post(t.w.tablePath(id, "count_rows"), map[string]any{"branch": "dev"}), 22),
			)
		}},
		{name: "branches: an existing one is 409 code 23; a missing one 404 code 22", ops: []string{"CreateTable", "CreateTableBranch", "DeleteTableBranch"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "branches/create"), map[string]any{"name": "b"}), nil),
				fails(t.post(t.w.tablePath(id, "branches/create"), map[string]any{"name": "b"}), 23),
				fails(t.post(t.w.tablePath(id, "branches/delete"), map[string]any{"name": "nope"}), 22),
				fails(t.post(t.w.tablePath(id, "branches/create"), map[string]any{"name": "c", "from_branch": "nope"}), 22),
			)
		}},
	}
}

// unsupported turns a 406 code 0 answer (the spec's "not supported by this backend") into a skip
// carrying the server's reason; anything else is nil (the caller checks it).
func unsupported(a answer) error {
	if a.err != nil || a.status != 406 || fails(a, 0) != nil {
		return nil
	}
	var p problem
	_ = json.Unmarshal(a.body, &p)
	return skipf("the server does not support it (406 code 0): %s", p.Error)
}

func batchChecks() []check {
	return []check{
		{name: "batch_commit_tables declares two tables at once; its transaction is described", ops: []string{"BatchCommitTables", "TableExists", "DescribeTransaction"}, run: func(t *T) error {
			a, b := t.id(t.name("a")), t.id(t.name("b"))
			ans := t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{
				{"declare_table": map[string]any{"id": a}},
				{"declare_table": map[string]any{"id": b}},
			}})
			if err := unsupported(ans); err != nil {
				return err
			}
			var out nsclient.BatchCommitTablesResponse
			if err := ok(ans, &out); err != nil {
				return err
			}
			if len(out.Results) != 2 || out.Results[0].DeclareTable == nil || out.Results[1].DeclareTable == nil {
				body, _ := json.Marshal(out)
				return fmt.Errorf("batch-commit answered %s, want two declare_table results", body)
			}
			if err := first(ok(t.post(t.w.tablePath(a, "exists"), map[string]any{}), nil), ok(t.post(t.w.tablePath(b, "exists"), map[string]any{}), nil)); err != nil {
				return err
			}
			if out.TransactionId == nil || *out.TransactionId == "" {
				return skipf("batch-commit answered no transaction_id")
			}
			var d nsclient.DescribeTransactionResponse
			return ok(t.post("/v1/transaction/"+url.PathEscape(*out.TransactionId)+"/describe", map[string]any{}), &d)
		}},
		{name: "batch_commit_tables is all or nothing: declare + a failing deregister applies neither", ops: []string{"BatchCommitTables", "TableExists"}, run: func(t *T) error {
			a := t.id(t.name("a"))
			ans := t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{
				{"declare_table": map[string]any{"id": a}},
				{"deregister_table": map[string]any{"id": t.id(t.name("missing"))}},
			}})
			if err := unsupported(ans); err != nil {
				return err
			}
			return first(fails(ans, 4), fails(t.post(t.w.tablePath(a, "exists"), map[string]any{}), 4))
		}},
		{name: "batch_commit_tables deregisters and declares together; one declaring a taken name applies nothing", ops: []string{"DeclareTable", "BatchCommitTables", "TableExists"}, run: func(t *T) error {
			a, b := t.id(t.name("a")), t.id(t.name("b"))
			var d nsclient.DeclareTableResponse
			if err := ok(t.post(t.w.tablePath(a, "declare"), map[string]any{}), &d); err != nil {
				return err
			}
			exists := func(id []string) answer { return t.post(t.w.tablePath(id, "exists"), map[string]any{}) }
			ans := t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{
				{"declare_table": map[string]any{"id": b}},
				{"declare_table": map[string]any{"id": a}},
			}})
			if err := unsupported(ans); err != nil {
				return err
			}
			if err := first(fails(ans, 5), fails(exists(b), 4)); err != nil {
				return err
			}
			var out nsclient.BatchCommitTablesResponse
			if err := ok(t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{
				{"deregister_table": map[string]any{"id": a}},
				{"declare_table": map[string]any{"id": b}},
			}}), &out); err != nil {
				return err
			}
			if len(out.Results) != 2 || out.Results[0].DeregisterTable == nil || out.Results[1].DeclareTable == nil ||
				out.Results[1].DeclareTable.Location == nil || *out.Results[1].DeclareTable.Location == "" {
				body, _ := json.Marshal(out)
				return fmt.Errorf("batch-commit answered %s, want a deregister_table then a declare_table result with its location", body)
			}
			err := first(fails(exists(a), 4), ok(exists(b), nil))
			// Deregister keeps the data: register it again (when the server can) so the run's
			// Cascade drop deletes it, leaving nothing of the run behind.
			if d.Location != nil && !t.caps.isUnbacked("RegisterTable") {
				_ = t.post(t.w.tablePath(a, "register"), map[string]any{"location": *d.Location})
			}
			return err
		}},
		{name: "batch_commit_tables delete_table_versions: all or nothing with a failing operation, applied alone", ops: []string{"CreateTable", "InsertIntoTable", "BatchCommitTables", "ListTableVersions"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			del := func(id []string) map[string]any {
				return map[string]any{"delete_table_versions": map[string]any{"id": id, "ranges": []map[string]any{{"start_version": 1, "end_version": 2}}}}
			}
			count := func() (int, error) {
				var p versionPage
				err := ok(t.post(t.w.tablePath(id, "version/list"), map[string]any{}), &p)
				return len(p.Versions), err
			}
			ans := t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{del(id), del(t.id(t.name("missing")))}})
			if err := unsupported(ans); err != nil {
				return err
			}
			if err := fails(ans, 4); err != nil {
				return err
			}
			if n, err := count(); err != nil || n != 3 {
				return first(err, fmt.Errorf("the failed batch left %d versions, want 3", n))
			}
			var out nsclient.BatchCommitTablesResponse
			if err := ok(t.post("/v1/table/batch-commit", map[string]any{"operations": []map[string]any{del(id)}}), &out); err != nil {
				return err
			}
			if len(out.Results) != 1 || out.Results[0].DeleteTableVersions == nil || out.Results[0].DeleteTableVersions.DeletedCount == nil || *out.Results[0].DeleteTableVersions.DeletedCount != 1 {
				body, _ := json.Marshal(out)
				return fmt.Errorf("batch-commit answered %s, want one delete_table_versions result with deleted_count 1", body)
			}
			n, err := count()
			return first(err, expect(n == 2, "after the batch the table has %d versions, want 2", n))
		}},
		{name: "batch_create_table_versions naming a missing table fails and commits no version", ops: []string{"CreateTable", "BatchCreateTableVersions", "ListTableVersions"}, run: func(t *T) error {
			a := t.id(t.name("a"))
			if err := t.mkTable(a, 1); err != nil {
				return err
			}
			entry := func(id []string) map[string]any {
				return map[string]any{"id": id, "version": 2, "manifest_path": "_versions/2.manifest"}
			}
			ans := t.post("/v1/table/version/batch-create", map[string]any{"entries": []map[string]any{entry(a), entry(t.id(t.name("missing")))}})
			if err := fails(ans, 4, 13); err != nil {
				return err
			}
			var p versionPage
			if err := ok(t.post(t.w.tablePath(a, "version/list"), map[string]any{}), &p); err != nil {
				return err
			}
			return expect(len(p.Versions) == 1, "the failed batch left %d versions, want 1", len(p.Versions))
		}},
		{name: "a missing transaction is 404 code 10", ops: []string{"DescribeTransaction"}, run: func(t *T) error {
			return fails(t.post("/v1/transaction/"+t.w.join(t.id(t.name("txn")))+"/describe", map[string]any{}), 10)
		}},
	}
}
