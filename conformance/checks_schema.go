package conformance

// The schema group and the operations not covered elsewhere: columns added, altered and dropped,
// schema and field metadata, merge_insert, explain/analyze, list_all_tables, register after
// deregister, version deletion, create_table_version refusing a manifest it cannot find.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/client/nsclient"
)

// fields is the describe_table schema's field names.
func (t *T) fields(id []string) ([]string, error) {
	var d nsclient.DescribeTableResponse
	if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{}), &d); err != nil {
		return nil, err
	}
	if d.Schema == nil {
		return nil, fmt.Errorf("describe answered no schema")
	}
	var out []string
	for _, f := range d.Schema.Fields {
		out = append(out, f.Name)
	}
	return out, nil
}

func (t *T) fieldsAre(id []string, want ...string) error {
	got, err := t.fields(id)
	if err != nil {
		return err
	}
	return expect(slices.Equal(got, want), "schema fields %v, want %v", got, want)
}

func schemaChecks() []check {
	return []check{
		{name: "add_columns from an SQL expression; the new column's values are computed", ops: []string{"CreateTable", "AlterTableAddColumns", "DescribeTable", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 4); err != nil {
				return err
			}
			var out nsclient.AlterTableAddColumnsResponse
			if err := ok(t.post(t.w.tablePath(id, "add_columns"), map[string]any{"new_columns": []map[string]any{{"name": "twice", "expression": "id * 2"}}}), &out); err != nil {
				return err
			}
			return first(
				expect(out.Version >= 2, "add_columns answered version %d", out.Version),
				t.fieldsAre(id, "id", "name", "twice"),
				t.idsAre(id, map[string]any{"filter": "twice = 6"}, []int64{3}),
			)
		}},
		{name: "alter_columns renames a column; drop_columns drops one; a missing column is 404 code 12", ops: []string{"CreateTable", "AlterTableAlterColumns", "AlterTableDropColumns", "DescribeTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 2); err != nil {
				return err
			}
			return first(
				ok(t.post(t.w.tablePath(id, "alter_columns"), map[string]any{"alterations": []map[string]any{{"path": "name", "rename": "label"}}}), nil),
				t.fieldsAre(id, "id", "label"),
				ok(t.post(t.w.tablePath(id, "drop_columns"), map[string]any{"columns": []string{"label"}}), nil),
				t.fieldsAre(id, "id"),
				fails(t.post(t.w.tablePath(id, "drop_columns"), map[string]any{"columns": []string{"nope"}}), 12),
				t.countIs(id, nil, 2),
			)
		}},
		{name: "schema_metadata/update answers the merged metadata; describe shows it", ops: []string{"CreateTable", "UpdateTableSchemaMetadata", "DescribeTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			a := t.post(t.w.tablePath(id, "schema_metadata/update"), map[string]string{"owner": "conformance"})
			var m map[string]any
			if err := ok(a, &m); err != nil {
				return err
			}
			if !strings.Contains(string(a.body), `"owner":"conformance"`) {
				return fmt.Errorf("the answer does not hold owner=conformance: %s", a)
			}
			var d nsclient.DescribeTableResponse
			if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{}), &d); err != nil {
				return err
			}
			b, _ := json.Marshal(d)
			return expect(strings.Contains(string(b), `"owner":"conformance"`), "describe does not show owner=conformance: %s", b)
		}},
		{name: "update_field_metadata sets a field's metadata", ops: []string{"CreateTable", "UpdateFieldMetadata"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			v := "identifier"
			var out nsclient.UpdateFieldMetadataResponse
			if err := ok(t.post(t.w.tablePath(id, "update_field_metadata"), map[string]any{"updates": []map[string]any{{"path": "id", "metadata": map[string]*string{"role": &v}}}}), &out); err != nil {
				return err
			}
			return expect(out.Fields != nil && (*out.Fields)["id"]["role"] == "identifier", "update_field_metadata answered %+v", out.Fields)
		}},
		{name: "merge_insert on id: matched rows updated, new rows inserted", ops: []string{"CreateTable", "MergeInsertIntoTable", "CountTableRows", "QueryTable"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 4); err != nil {
				return err
			}
			q := url.Values{"on": {"id"}, "when_matched_update_all": {"true"}, "when_not_matched_insert_all": {"true"}}
			return first(
				ok(t.postQ(t.w.tablePath(id, "merge_insert"), q, rows(2, 4)), nil),
				t.idsAre(id, map[string]any{}, seq(0, 6)),
			)
		}},
		{name: "explain_plan and analyze_plan answer a plan", ops: []string{"CreateTable", "ExplainTableQueryPlan", "AnalyzeTableQueryPlan"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 3); err != nil {
				return err
			}
			var plan string
			if err := ok(t.post(t.w.tablePath(id, "explain_plan"), map[string]any{"query": map[string]any{"k": 10, "filter": "id > 0"}}), &plan); err != nil {
				return err
			}
			if plan == "" {
				return fmt.Errorf("explain_plan answered an empty plan")
			}
			if err := ok(t.post(t.w.tablePath(id, "analyze_plan"), map[string]any{"k": 10, "filter": "id > 0"}), &plan); err != nil {
				return err
			}
			return expect(plan != "", "analyze_plan answered an empty plan")
		}},
		{name: "list_all_tables lists the run's tables by full id, each once", ops: []string{"CreateTable", "ListAllTables"}, run: func(t *T) error {
			a, b := t.id(t.name("t")), t.id(t.name("t"))
			if err := first(t.mkTable(a, 1), t.mkTable(b, 1)); err != nil {
				return err
			}
			got, err := t.paginate("/v1/table", 50)
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			for _, g := range got {
				if seen[g] {
					return fmt.Errorf("listed twice: %q", g)
				}
				seen[g] = true
			}
			for _, id := range [][]string{a, b} {
				full := strings.Join(id, t.w.delimiter)
				if !seen[full] {
					return fmt.Errorf("%q not among the %d tables listed", full, len(got))
				}
			}
			return nil
		}},
		{name: "register the location of a deregistered table: its rows are back", ops: []string{"CreateTable", "DescribeTable", "DeregisterTable", "RegisterTable", "CountTableRows"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 3); err != nil {
				return err
			}
			var d nsclient.DescribeTableResponse
			if err := ok(t.post(t.w.tablePath(id, "describe"), map[string]any{}), &d); err != nil {
				return err
			}
			if d.Location == nil {
				return fmt.Errorf("describe answered no location")
			}
			back := t.id(t.name("back"))
			return first(
				ok(t.post(t.w.tablePath(id, "deregister"), map[string]any{}), nil),
				ok(t.post(t.w.tablePath(back, "register"), map[string]any{"location": *d.Location}), nil),
				t.countIs(back, nil, 3),
				fails(t.post(t.w.tablePath(t.id(t.name("t")), "register"), map[string]any{}), 13),
			)
		}},
	}
}

// versionExtras are the version checks of operations that only a managed-versioning client uses.
func versionExtraChecks() []check {
	return []check{
		{name: "version/delete removes a range [start, end) of versions", ops: []string{"CreateTable", "InsertIntoTable", "BatchDeleteTableVersions", "ListTableVersions"}, run: func(t *T) error {
			id, err := t.versioned()
			if err != nil {
				return err
			}
			if err := ok(t.post(t.w.tablePath(id, "version/delete"), map[string]any{"ranges": []map[string]any{{"start_version": 1, "end_version": 2}}}), nil); err != nil {
				return err
			}
			var p versionPage
			if err := ok(t.post(t.w.tablePath(id, "version/list"), map[string]any{}), &p); err != nil {
				return err
			}
			var got []int64
			for _, v := range p.Versions {
				got = append(got, v.Version)
			}
			slices.Sort(got)
			return first(expect(slices.Equal(got, []int64{2, 3}), "versions after deleting [1, 2): %v", got), t.countIs(id, nil, 9))
		}},
		{name: "create_table_version of a manifest that is not there is 400 code 13, no version made", ops: []string{"CreateTable", "CreateTableVersion", "ListTableVersions"}, run: func(t *T) error {
			id := t.id(t.name("t"))
			if err := t.mkTable(id, 1); err != nil {
				return err
			}
			var p versionPage
			return first(
				fails(t.post(t.w.tablePath(id, "version/create"), map[string]any{"version": 2, "manifest_path": "_versions/nope.manifest"}), 13),
				ok(t.post(t.w.tablePath(id, "version/list"), map[string]any{}), &p),
				expect(len(p.Versions) == 1, "versions after the refused create: %d, want 1", len(p.Versions)),
			)
		}},
		{name: "alter of a missing transaction is 404 code 10", ops: []string{"AlterTransaction"}, run: func(t *T) error {
			return fails(t.post("/v1/transaction/"+t.w.join(t.id(t.name("txn")))+"/alter", map[string]any{"actions": []map[string]any{{"setPropertyAction": map[string]any{"key": "k", "value": "v"}}}}), 10)
		}},
	}
}
