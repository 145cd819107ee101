package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
)

const adoptLong = `Turning authorization on over a catalog filled with it off leaves every existing project,
warehouse, namespace and table without tuples: estate admins see nothing, grants on them are refused,
warehouses are hidden. 'adopt' reads the whole estate from the roots (the catalog root, the control
root and every warehouse root) and writes, for each object, what a create through the catalog would
have: its edge to the parent it sits under (warehouse to project, a warehouse's namespace to the
warehouse, a top-level namespace to the catalog, a namespace or table to its namespace) and, with
--owner, that subject as owner (admin of a project) of every object nobody owns. Without --apply it
is a dry run: it lists what it would write and writes nothing. Applied, it is idempotent and safe
while servers run (each write ignores what is already there); run it again after objects were
written straight to storage. Authz and root flags are those of 'lancecat serve'.`

func adoptCmd() *cobra.Command {
	c := &cobra.Command{Use: "adopt [--owner SUBJECT] [--apply] [--json]", Short: "Bring objects made with authorization off under governance (dry run unless --apply)",
		Long: adoptLong, Args: exactArgs()}
	cfg, checkEnv := settings(c, append(rootFlags, authzFlags...)...)
	ownerFlag := c.Flags().String("owner", "", "owner of every object nobody owns: user:<id>, team:<id>#member or role:<id>#assignee (empty: edges only)")
	apply := c.Flags().Bool("apply", false, "write the tuples (without it: a dry run)")
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		var owner authz.Subject
		if *ownerFlag != "" {
			s, err := authz.ParseSubject(*ownerFlag)
			if err == nil && s == authz.Everyone {
				err = fmt.Errorf("everyone (user:*) cannot own objects: name a user, team or role")
			}
			if err != nil {
				return misuse("--owner: %v", err)
			}
			owner = s
		}
		if err := checkEnv(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		rep, err := app.Adopt(ctx, *cfg, owner, *apply)
		if err != nil {
			return failed(err)
		}
		if *asJSON {
			type change struct {
				Object  string   `json:"object"`
				Parent  string   `json:"parent,omitempty"`
				Missing []string `json:"missing_tuples,omitempty"`
				Owner   string   `json:"owner,omitempty"`
			}
			out := struct {
				Applied bool     `json:"applied"`
				Objects int      `json:"objects"`
				Changes []change `json:"changes"`
			}{Applied: rep.Applied, Objects: rep.Objects, Changes: []change{}}
			for _, a := range rep.Changes {
				ch := change{Object: a.Object.String(), Owner: string(a.Owner)}
				if !a.Parent.IsZero() {
					ch.Parent = a.Parent.String()
				}
				for _, t := range a.Missing {
					ch.Missing = append(ch.Missing, t.String())
				}
				out.Changes = append(out.Changes, ch)
			}
			return failed(json.NewEncoder(cmd.OutOrStdout()).Encode(out))
		}
		verb := "would write"
		if rep.Applied {
			verb = "wrote"
		}
		for _, a := range rep.Changes {
			line := a.Object.String()
			if len(a.Missing) > 0 {
				line += fmt.Sprintf(": %s its edge to %s", verb, a.Parent)
			}
			if a.Owner != "" {
				line += fmt.Sprintf("; owner %s", a.Owner)
			}
			fmt.Fprintln(cmd.OutOrStdout(), line)
		}
		if rep.Applied {
			fmt.Fprintf(cmd.ErrOrStderr(), "read %d objects, adopted %d\n", rep.Objects, len(rep.Changes))
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "read %d objects, %d to adopt; dry run: nothing written (add --apply)\n", rep.Objects, len(rep.Changes))
		}
		return nil
	}
	return c
}
