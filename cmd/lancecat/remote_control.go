package main

import (
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/controlclient"
)

// projectCmd, warehouseCmd and grantCmd are the control plane of a served catalog.

// nameCmd is a command on one project or warehouse id (a plain name, not split by --sep).
func nameCmd(r *remote, use, short string, fn func(cmd *cobra.Command, c *client.Client, name string) error) *cobra.Command {
	arg := strings.Fields(use)[1]
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(arg),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			return fn(cmd, c, args[0])
		},
	}
}

func projectCmd() *cobra.Command {
	return remoteGroup("project", "Projects of a served catalog: list, describe, create, drop, protect",
		func(r *remote) []*cobra.Command {
			list := &cobra.Command{
				Use:   "list",
				Short: "List the projects you may see",
				Args:  cobra.NoArgs,
				RunE: func(cmd *cobra.Command, _ []string) error {
					c, err := r.client()
					if err != nil {
						return err
					}
					ps, err := c.ListProjects(cmd.Context())
					if err != nil {
						return failed(err)
					}
					if ps == nil {
						ps = []controlclient.Project{}
					}
					return r.show(cmd.OutOrStdout(), ps, func(tw *tabwriter.Writer) {
						row(tw, "PROJECT", "WAREHOUSES", "PROTECTED", "CREATED BY", "CREATED")
						for _, p := range ps {
							row(tw, p.Id, len(deref(p.Warehouses)), val(p.Protected), val(p.CreatedBy), when(p.CreatedAt))
						}
					})
				},
			}
			describe := nameCmd(r, "describe PROJECT", "Describe a project and its warehouses",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					p, err := c.DescribeProject(cmd.Context(), name)
					if err != nil {
						return failed(err)
					}
					return r.showProject(cmd, p)
				})
			create := nameCmd(r, "create PROJECT", "Create a project (you become its admin)",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					p, err := c.CreateProject(cmd.Context(), name)
					if err != nil {
						return failed(err)
					}
					return r.showProject(cmd, p)
				})
			drop := nameCmd(r, "drop PROJECT", "Delete a project (it must hold no warehouse)",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					if err := c.DeleteProject(cmd.Context(), name); err != nil {
						return failed(err)
					}
					return r.done(cmd, "dropped", "project", []string{name})
				})
			var off bool
			protect := nameCmd(r, "protect PROJECT", "Protect a project from deletion (--off to lift it)",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					p, err := c.SetProjectProtection(cmd.Context(), name, !off)
					if err != nil {
						return failed(err)
					}
					return r.showProject(cmd, p)
				})
			protect.Flags().BoolVar(&off, "off", false, "lift the protection")
			return []*cobra.Command{list, describe, create, drop, protect}
		})
}

func (r *remote) showProject(cmd *cobra.Command, p *controlclient.Project) error {
	return r.show(cmd.OutOrStdout(), p, func(tw *tabwriter.Writer) {
		row(tw, "PROJECT", p.Id)
		row(tw, "PROTECTED", val(p.Protected))
		row(tw, "CREATED BY", val(p.CreatedBy))
		row(tw, "CREATED", when(p.CreatedAt))
		if ws := deref(p.Warehouses); len(ws) > 0 {
			row(tw, "")
			row(tw, "WAREHOUSE", "BUCKET", "STATUS")
			for _, w := range ws {
				row(tw, w.Id, w.Bucket, val(w.Status))
			}
		}
	})
}

func warehouseCmd() *cobra.Command {
	return remoteGroup("warehouse", "Warehouses of a served catalog: list, describe, create, drop, protect",
		func(r *remote) []*cobra.Command {
			var project string
			list := &cobra.Command{
				Use:   "list",
				Short: "List the warehouses you may see (of --project, or of every project)",
				Args:  cobra.NoArgs,
				RunE: func(cmd *cobra.Command, _ []string) error {
					c, err := r.client()
					if err != nil {
						return err
					}
					ws, err := c.ListWarehouses(cmd.Context(), project)
					if err != nil {
						return failed(err)
					}
					if ws == nil {
						ws = []controlclient.Warehouse{}
					}
					return r.show(cmd.OutOrStdout(), ws, func(tw *tabwriter.Writer) {
						row(tw, "WAREHOUSE", "PROJECT", "BUCKET", "STATUS", "PROTECTED", "ROOT")
						for _, w := range ws {
							row(tw, w.Id, w.Project, w.Bucket, w.Status, val(w.Protected), w.RootUri)
						}
					})
				},
			}
			list.Flags().StringVar(&project, "project", "", "only this project's warehouses")
			describe := nameCmd(r, "describe WAREHOUSE", "Describe a warehouse",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					w, err := c.DescribeWarehouse(cmd.Context(), name)
					if err != nil {
						return failed(err)
					}
					return r.showWarehouse(cmd, w)
				})
			var bucket string
			create := &cobra.Command{
				Use:   "create PROJECT WAREHOUSE [--bucket BUCKET]",
				Short: "Create a warehouse in a project, on a bucket of the server's S3 (or a directory of a local server)",
				Args:  exactArgs("PROJECT", "WAREHOUSE"),
				RunE: func(cmd *cobra.Command, args []string) error {
					c, err := r.client()
					if err != nil {
						return err
					}
					w, err := c.CreateWarehouse(cmd.Context(), args[0], args[1], bucket)
					if err != nil {
						return failed(err)
					}
					return r.showWarehouse(cmd, w)
				},
			}
			create.Flags().StringVar(&bucket, "bucket", "", "the warehouse's bucket (S3) or absolute directory (local); default: the server names it after the id")
			var cascade bool
			drop := nameCmd(r, "drop WAREHOUSE", "Delete a warehouse (it must be empty, unless --cascade; its bucket and data stay)",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					if err := c.DeleteWarehouse(cmd.Context(), name, cascade); err != nil {
						return failed(err)
					}
					return r.done(cmd, "dropped", "warehouse", []string{name})
				})
			drop.Flags().BoolVar(&cascade, "cascade", false, "drop its namespaces and tables with it")
			var off bool
			protect := nameCmd(r, "protect WAREHOUSE", "Protect a warehouse from deletion (--off to lift it)",
				func(cmd *cobra.Command, c *client.Client, name string) error {
					w, err := c.SetWarehouseProtection(cmd.Context(), name, !off)
					if err != nil {
						return failed(err)
					}
					return r.showWarehouse(cmd, w)
				})
			protect.Flags().BoolVar(&off, "off", false, "lift the protection")
			return []*cobra.Command{list, describe, create, drop, protect}
		})
}

func (r *remote) showWarehouse(cmd *cobra.Command, w *controlclient.Warehouse) error {
	return r.show(cmd.OutOrStdout(), w, func(tw *tabwriter.Writer) {
		row(tw, "WAREHOUSE", w.Id)
		row(tw, "PROJECT", w.Project)
		row(tw, "BUCKET", w.Bucket)
		row(tw, "ROOT", w.RootUri)
		row(tw, "STATUS", w.Status)
		row(tw, "PROTECTED", val(w.Protected))
		row(tw, "CREATED", when(w.CreatedAt))
	})
}

// objectTypes are what grants are on, as typed.
var objectTypes = []string{string(client.OnProject), string(client.OnWarehouse), string(client.OnNamespace), string(client.OnTable)}

// relations are the relations a grant gives.
var relations = []string{"owner", "writer", "reader", "validator", "maintainer", "manage_grants", "pass_grants", "admin", "member"}

// grantObject parses TYPE and ID: a namespace's or table's id is split by --sep.
func (r *remote) grantObject(typ, id string) (client.ObjectType, []string, error) {
	t := client.ObjectType(typ)
	switch t {
	case client.OnProject, client.OnWarehouse:
		return t, []string{id}, nil
	case client.OnNamespace, client.OnTable:
		parts, err := r.id(id)
		return t, parts, err
	}
	return "", nil, misuse("object type %q: want project, warehouse, namespace or table", typ)
}

// grantEntry is a grant as --json prints it.
type grantEntry struct {
	ObjectType string `json:"object_type"`
	ObjectID   string `json:"object_id"`
	Subject    string `json:"subject"`
	Relation   string `json:"relation"`
}

func grantCmd() *cobra.Command {
	return remoteGroup("grant", "Grants of a served catalog: list, add, revoke (who holds which relation on an object)",
		func(r *remote) []*cobra.Command {
			typeArg := func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				switch len(args) {
				case 0:
					return objectTypes, cobra.ShellCompDirectiveNoFileComp
				case 3:
					return relations, cobra.ShellCompDirectiveNoFileComp
				}
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			list := &cobra.Command{
				Use:               "list TYPE ID",
				Short:             "List the grants held directly on an object (TYPE: project, warehouse, namespace, table)",
				Args:              exactArgs("TYPE", "ID"),
				ValidArgsFunction: typeArg,
				RunE: func(cmd *cobra.Command, args []string) error {
					t, id, err := r.grantObject(args[0], args[1])
					if err != nil {
						return err
					}
					c, err := r.client()
					if err != nil {
						return err
					}
					gs, err := c.ListAccess(cmd.Context(), t, id)
					if err != nil {
						return failed(err)
					}
					out := make([]grantEntry, 0, len(gs))
					for _, g := range gs {
						out = append(out, grantEntry{string(t), args[1], g.Subject, g.Relation})
					}
					return r.show(cmd.OutOrStdout(), out, func(tw *tabwriter.Writer) {
						row(tw, "SUBJECT", "RELATION")
						for _, g := range out {
							row(tw, g.Subject, g.Relation)
						}
					})
				},
			}
			change := func(verb, past, short string, do func(c *client.Client, cmd *cobra.Command, t client.ObjectType, id []string, g client.Grant) error) *cobra.Command {
				return &cobra.Command{
					Use:               verb + " TYPE ID SUBJECT RELATION",
					Short:             short,
					Args:              exactArgs("TYPE", "ID", "SUBJECT", "RELATION"),
					ValidArgsFunction: typeArg,
					RunE: func(cmd *cobra.Command, args []string) error {
						t, id, err := r.grantObject(args[0], args[1])
						if err != nil {
							return err
						}
						c, err := r.client()
						if err != nil {
							return err
						}
						g := client.Grant{Subject: args[2], Relation: args[3]}
						if err := do(c, cmd, t, id, g); err != nil {
							return failed(err)
						}
						e := grantEntry{string(t), args[1], g.Subject, g.Relation}
						return r.show(cmd.OutOrStdout(), e, func(tw *tabwriter.Writer) {
							row(tw, "OBJECT", "SUBJECT", "RELATION", "")
							row(tw, string(t)+" "+args[1], g.Subject, g.Relation, past)
						})
					},
				}
			}
			add := change("grant", "granted", "Give SUBJECT (user:ID, team:ID#member, role:ID#assignee, user:*) RELATION on an object",
				func(c *client.Client, cmd *cobra.Command, t client.ObjectType, id []string, g client.Grant) error {
					return c.GrantAccess(cmd.Context(), t, id, g)
				})
			add.Use, add.Aliases = strings.Replace(add.Use, "grant", "add", 1), []string{"grant"}
			revoke := change("revoke", "revoked", "Take RELATION on an object back from SUBJECT",
				func(c *client.Client, cmd *cobra.Command, t client.ObjectType, id []string, g client.Grant) error {
					return c.RevokeAccess(cmd.Context(), t, id, g)
				})
			return []*cobra.Command{list, add, revoke}
		})
}
