package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
)

// namespaceCmd is `lancecat namespace …`: the namespaces of a served catalog.
func namespaceCmd() *cobra.Command {
	return remoteGroup("namespace", "Namespaces of a served catalog: list, describe, create, drop, undrop, protect, tasks",
		func(r *remote) []*cobra.Command {
			return append([]*cobra.Command{
				nsList(r), nsDescribe(r), nsCreate(r), nsDrop(r),
			}, nsControl(r)...)
		})
}

// tableCmd is `lancecat table …`: the tables of a served catalog.
func tableCmd() *cobra.Command {
	return remoteGroup("table", "Tables of a served catalog: list, describe, create, drop, undrop, protect, tasks, maintenance",
		func(r *remote) []*cobra.Command {
			return append([]*cobra.Command{
				tblList(r), tblDescribe(r), tblCreate(r), tblDrop(r), tblVersions(r),
			}, tblControl(r)...)
		})
}

// nsEntry is a listed namespace or table as --json prints it.
type nsEntry struct {
	Name string   `json:"name"`
	ID   []string `json:"id"`
}

func nsList(r *remote) *cobra.Command {
	return listCmd(r, "list [PARENT]", "List the child namespaces of PARENT (the root without one)", "NAMESPACE", (*client.Client).ListNamespaces)
}

// listCmd lists the names under one id, the root without one: a column headed header, or with
// --json their entries.
func listCmd(r *remote, use, short, header string, list func(*client.Client, context.Context, []string) ([]string, error)) *cobra.Command {
	return idCmd(r, use, short, func(cmd *cobra.Command, c *client.Client, parent []string) error {
		names, err := list(c, cmd.Context(), parent)
		if err != nil {
			return failed(err)
		}
		return r.show(cmd.OutOrStdout(), entries(parent, names), func(tw *tabwriter.Writer) {
			row(tw, header)
			for _, n := range names {
				row(tw, strings.Join(append(slices.Clone(parent), n), r.sep))
			}
		})
	})
}

// entries is names under parent as --json prints them (never null: an empty list is []).
func entries(parent []string, names []string) []nsEntry {
	out := make([]nsEntry, 0, len(names))
	for _, n := range names {
		out = append(out, nsEntry{Name: n, ID: append(slices.Clone(parent), n)})
	}
	return out
}

// first is args[0], or "".
func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func nsDescribe(r *remote) *cobra.Command {
	return idCmd(r, "describe NAMESPACE", "Describe a namespace: its properties",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			ns, err := c.DescribeNamespace(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			props := ns.Properties
			if props == nil {
				props = map[string]string{}
			}
			v := struct {
				ID         []string          `json:"id"`
				Properties map[string]string `json:"properties"`
			}{id, props}
			return r.show(cmd.OutOrStdout(), v, func(tw *tabwriter.Writer) {
				row(tw, "PROPERTY", "VALUE")
				keys := make([]string, 0, len(props))
				for k := range props {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					row(tw, k, props[k])
				}
			})
		})
}

func nsCreate(r *remote) *cobra.Command {
	var props []string
	c := idCmd(r, "create NAMESPACE", "Create a namespace (its parent must exist)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			pm := map[string]string{}
			for _, p := range props {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return misuse("--property %q: want KEY=VALUE", p)
				}
				pm[k] = v
			}
			if err := c.CreateNamespace(cmd.Context(), id, pm); err != nil {
				return failed(err)
			}
			return r.done(cmd, "created", "namespace", id)
		})
	c.Flags().StringArrayVarP(&props, "property", "p", nil, "a property KEY=VALUE (repeatable)")
	return c
}

// done reports a change: {"id": …, "<what>": true} with --json, else one line.
func (r *remote) done(cmd *cobra.Command, what, kind string, id []string) error {
	if r.json {
		return r.show(cmd.OutOrStdout(), map[string]any{"id": nonNil(id), what: true}, nil)
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s\n", what, kind, strings.Join(id, r.sep))
	return failed(err)
}

// nonNil is id, or [] for the root (JSON never gets null for an id).
func nonNil(id []string) []string {
	if id == nil {
		return []string{}
	}
	return id
}

func nsDrop(r *remote) *cobra.Command {
	var cascade bool
	c := idCmd(r, "drop NAMESPACE", "Drop a namespace (refused when it holds anything, unless --cascade)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			b := client.Restrict
			if cascade {
				b = client.Cascade
			}
			if err := c.DropNamespace(cmd.Context(), id, b); err != nil {
				return failed(err)
			}
			return r.done(cmd, "dropped", "namespace", id)
		})
	c.Flags().BoolVar(&cascade, "cascade", false, "drop what the namespace holds with it")
	return c
}

func tblList(r *remote) *cobra.Command {
	return listCmd(r, "list [NAMESPACE]", "List the tables of NAMESPACE (the root without one)", "TABLE", (*client.Client).ListTables)
}

func tblDescribe(r *remote) *cobra.Command {
	return idCmd(r, "describe TABLE", "Describe a table: location, version, columns (--json: the spec's DescribeTableResponse)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			t, err := c.DescribeTable(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			return r.show(cmd.OutOrStdout(), t.Raw, func(tw *tabwriter.Writer) {
				row(tw, "TABLE", strings.Join(id, r.sep))
				row(tw, "LOCATION", orDash(t.Location))
				row(tw, "VERSION", t.Version)
				row(tw, "DECLARED", t.Declared)
				if s := t.Raw.Schema; s != nil && len(s.Fields) > 0 {
					row(tw, "")
					row(tw, "COLUMN", "TYPE", "NULLABLE")
					for _, f := range s.Fields {
						row(tw, f.Name, f.Type.Type, f.Nullable)
					}
				}
			})
		})
}

func tblCreate(r *remote) *cobra.Command {
	var from string
	c := idCmd(r, "create TABLE", "Create a table: declared (no data yet), or from an Arrow IPC file or stream with --from FILE (- for stdin)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			if from == "" {
				if _, err := c.DeclareTable(cmd.Context(), id); err != nil {
					return failed(err)
				}
				return r.done(cmd, "created", "table", id)
			}
			rd, closeFn, err := openRecords(from, cmd.InOrStdin())
			if err != nil {
				return misuse("--from %s: %v", from, err)
			}
			defer closeFn()
			res, err := c.CreateTable(cmd.Context(), id, rd, client.Create)
			if err != nil {
				return failed(err)
			}
			if r.json {
				return r.show(cmd.OutOrStdout(), map[string]any{"id": id, "created": true, "version": res.Version}, nil)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "created table %s at version %d\n", strings.Join(id, r.sep), res.Version)
			return failed(err)
		})
	c.Flags().StringVar(&from, "from", "", "an Arrow IPC file or stream with the table's rows (- for stdin: a stream)")
	return c
}

func tblDrop(r *remote) *cobra.Command {
	return idCmd(r, "drop TABLE", "Drop a table (recoverable with 'table undrop' while the server keeps dropped tables)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			if err := c.DropTable(cmd.Context(), id); err != nil {
				return failed(err)
			}
			return r.done(cmd, "dropped", "table", id)
		})
}

// millis is a spec timestamp (milliseconds since the epoch) as RFC 3339 in UTC, or "-".
func millis(ms *int64) string {
	if ms == nil {
		return "-"
	}
	t := time.UnixMilli(*ms)
	return when(&t)
}

func tblVersions(r *remote) *cobra.Command {
	return idCmd(r, "versions TABLE", "List a table's versions",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			vs, err := c.ListVersions(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			if vs == nil {
				vs = []nsclient.TableVersion{}
			}
			return r.show(cmd.OutOrStdout(), vs, func(tw *tabwriter.Writer) {
				row(tw, "VERSION", "TIMESTAMP", "MANIFEST")
				for _, v := range vs {
					row(tw, v.Version, millis(v.TimestampMillis), v.ManifestPath)
				}
			})
		})
}
