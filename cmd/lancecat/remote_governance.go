package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/client"
)

// The control plane's doors on namespaces and tables: undrop, protect, tasks, maintenance run.

// idCmd is a command on one namespace or table id (its parts split by --sep): parse it, connect,
// run fn. An optional argument ("list [PARENT]") absent is the root namespace.
func idCmd(r *remote, use, short string, fn func(cmd *cobra.Command, c *client.Client, id []string) error) *cobra.Command {
	arg, _, _ := strings.Cut(strings.TrimPrefix(use, strings.Fields(use)[0]+" "), " ")
	args := exactArgs(arg)
	if strings.HasPrefix(arg, "[") {
		args = cobra.MaximumNArgs(1)
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := r.id(first(args))
			if err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			return fn(cmd, c, id)
		},
	}
}

func nsControl(r *remote) []*cobra.Command {
	undrop := idCmd(r, "undrop NAMESPACE", "Rebuild a cascade-dropped namespace and what it held",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			u, err := c.UndropNamespace(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			return r.showUndrop(cmd.OutOrStdout(), u)
		})
	protect := protectCmd(r, "NAMESPACE", "a namespace", func(cmd *cobra.Command, c *client.Client, id []string, on *bool) (*client.Protection, error) {
		if on == nil {
			return c.NamespaceProtection(cmd.Context(), id)
		}
		return c.SetNamespaceProtection(cmd.Context(), id, *on)
	})
	tasks := idCmd(r, "tasks NAMESPACE", "The tasks of every table under a namespace, newest first, then pending trash deadlines",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			ts, err := c.NamespaceTasks(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			return r.showTasks(cmd.OutOrStdout(), ts)
		})
	return []*cobra.Command{undrop, protect, tasks}
}

func tblControl(r *remote) []*cobra.Command {
	undrop := idCmd(r, "undrop TABLE", "Re-register a recoverably dropped table at its old location",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			u, err := c.UndropTable(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			return r.showUndrop(cmd.OutOrStdout(), u)
		})
	protect := protectCmd(r, "TABLE", "a table", func(cmd *cobra.Command, c *client.Client, id []string, on *bool) (*client.Protection, error) {
		if on == nil {
			return c.TableProtection(cmd.Context(), id)
		}
		return c.SetTableProtection(cmd.Context(), id, *on)
	})
	tasks := idCmd(r, "tasks TABLE", "A table's tasks (maintenance passes), newest first, then its pending trash deadline",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			ts, err := c.TableTasks(cmd.Context(), id)
			if err != nil {
				return failed(err)
			}
			return r.showTasks(cmd.OutOrStdout(), ts)
		})
	return []*cobra.Command{undrop, protect, tasks, group("maintenance", "Maintenance of a table on request", "", maintenanceRun(r))}
}

// protectCmd is `… protect ID [--off|--status]`: arm protection (the default), disarm it, or say it.
func protectCmd(r *remote, arg, what string, fn func(cmd *cobra.Command, c *client.Client, id []string, on *bool) (*client.Protection, error)) *cobra.Command {
	var off, status bool
	c := idCmd(r, "protect "+arg, "Protect "+what+" from drops and cleanup (--off to lift it, --status to ask)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			var on *bool
			switch {
			case off && status:
				return misuse("--off and --status exclude each other")
			case off:
				on = new(bool)
			case !status:
				on = new(bool)
				*on = true
			}
			p, err := fn(cmd, c, id, on)
			if err != nil {
				return failed(err)
			}
			return r.show(cmd.OutOrStdout(), p, func(tw *tabwriter.Writer) {
				row(tw, "ID", "PROTECTED", "SET BY", "SET AT")
				row(tw, strings.Join(p.Id, r.sep), p.Protected, val(p.SetBy), when(p.SetAt))
			})
		})
	c.Flags().BoolVar(&off, "off", false, "lift the protection")
	c.Flags().BoolVar(&status, "status", false, "only say whether it is protected")
	return c
}

func (r *remote) showUndrop(w io.Writer, u *client.Undropped) error {
	return r.show(w, u, func(tw *tabwriter.Writer) {
		row(tw, "RESTORED", "KIND")
		ns, ts := deref(u.Namespaces), deref(u.Tables)
		if len(ns)+len(ts) == 0 {
			row(tw, strings.Join(u.Id, r.sep), kindOf(u))
		}
		// The lists name ids joined by the server's delimiter; show them as typed here.
		for _, n := range ns {
			row(tw, strings.ReplaceAll(n, r.delimiter, r.sep), "namespace")
		}
		for _, t := range ts {
			row(tw, strings.ReplaceAll(t, r.delimiter, r.sep), "table")
		}
	})
}

// kindOf is what an undrop answer restored at its id.
func kindOf(u *client.Undropped) string {
	if u.Location != nil {
		return "table"
	}
	return "namespace"
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (r *remote) showTasks(w io.Writer, ts []client.Task) error {
	if ts == nil {
		ts = []client.Task{}
	}
	return r.show(w, ts, func(tw *tabwriter.Writer) {
		row(tw, "ID", "KIND", "STATE", "ORIGIN", "STARTED", "FINISHED", "ERROR")
		for _, t := range ts {
			state := val(t.State)
			if t.ExpiresAt != nil {
				state = "expires " + when(t.ExpiresAt)
			}
			started := when(t.StartedAt)
			if t.DroppedAt != nil {
				started = when(t.DroppedAt)
			}
			row(tw, strings.Join(t.Id, r.sep), t.Kind, state, val(t.Origin), started, when(t.FinishedAt), val(t.Error))
		}
	})
}

func maintenanceRun(r *remote) *cobra.Command {
	var steps []string
	var dry bool
	var olderThan int64
	c := idCmd(r, "run TABLE", "Run maintenance steps on a table now (compact, optimize_indices, cleanup; default all, in that order)",
		func(cmd *cobra.Command, c *client.Client, id []string) error {
			m := client.Maintenance{DryRun: dry, OlderThanSeconds: olderThan}
			for _, s := range steps {
				st := client.MaintenanceStep(s)
				if !st.Valid() {
					return misuse("--step %q: want compact, optimize_indices or cleanup", s)
				}
				m.Steps = append(m.Steps, st)
			}
			rep, err := c.RunTableMaintenance(cmd.Context(), id, m)
			if err != nil {
				return failed(err)
			}
			return r.show(cmd.OutOrStdout(), rep, func(tw *tabwriter.Writer) {
				row(tw, "STEP", "STATUS", "VERSION", "MS", "REASON")
				for _, s := range rep.Steps {
					row(tw, s.Step, s.Status, val(s.Version), s.DurationMs, val(s.Reason))
				}
				fmt.Fprintf(tw, "latest version %d%s\n", rep.Version, map[bool]string{true: " (dry run: nothing changed)"}[rep.DryRun])
			})
		})
	c.Flags().StringSliceVar(&steps, "step", nil, "a step to run: compact, optimize_indices, cleanup (repeatable; default all)")
	c.Flags().BoolVar(&dry, "dry-run", false, "report what would be done; change nothing")
	c.Flags().Int64Var(&olderThan, "older-than-seconds", 0, "cleanup: remove versions older than this, replacing the policy's retention")
	_ = c.RegisterFlagCompletionFunc("step", cobra.FixedCompletions([]string{"compact", "optimize_indices", "cleanup"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}
