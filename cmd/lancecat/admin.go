package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
)

const estateLong = `Estate admins (admin on the catalog) mint projects, read the event stream and administer raw
access. A subject is user:<id>, team:<id>#member or role:<id>#assignee. 'lancecat serve
--estate-admins' only grants its list at start (a bootstrap); these commands list, add and remove
estate admins for good (drop a revoked admin from --estate-admins too, or the next start grants
it again). The last estate admin cannot be revoked.
Authz flags (--authz openfga, --openfga-url, --openfga-store, --openfga-token) are those of
'lancecat serve' and read the same LANCECAT_* environment. No server is needed.`

const navigatorsLong = `'navigators' makes the navigator tuples (who sees the namespaces and warehouses above what they
hold a rung on) what the store's grants ask for: it writes the missing ones, and with --prune
deletes the stale ones. Every server start writes the missing ones in the background; run it by
hand after a rolling upgrade from a version without navigator has finished (grants made by old
replicas meanwhile wrote none). It reads every tuple of the store once and is idempotent.
Authz flags (--authz openfga, --openfga-url, --openfga-store, --openfga-token) are those of
'lancecat serve' and read the same LANCECAT_* environment.`

// adminCmd administers estate admins and navigator tuples directly in OpenFGA.
func adminCmd() *cobra.Command {
	estate := group("estate", "List, grant and revoke estate admins (in OpenFGA)", estateLong,
		estateListCmd(), estateChangeCmd("grant"), estateChangeCmd("revoke"))
	return group("admin", "Estate admins, navigator tuples, and backup and restore of the grants (in OpenFGA)",
		estateLong+"\n\n"+navigatorsLong+"\n\n"+adoptLong+"\n\n"+backupLong,
		estate, navigatorsCmd(), adoptCmd(), backupCmd(), restoreCmd())
}

// openAuthorizer opens OpenFGA as cfg names it.
func openAuthorizer(ctx context.Context, cfg *app.Config, checkEnv func() error) (*authz.OpenFGA, error) {
	if err := checkEnv(); err != nil {
		return nil, err
	}
	fga, err := app.OpenAuthorizer(ctx, *cfg)
	return fga, failed(err)
}

func estateListCmd() *cobra.Command {
	c := &cobra.Command{Use: "list [--json]", Short: "List the estate admins", Long: estateLong, Args: exactArgs()}
	cfg, checkEnv := settings(c, authzFlags...)
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fga, err := openAuthorizer(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		admins, err := fga.EstateAdmins(ctx)
		if err != nil {
			return failed(err)
		}
		if *asJSON {
			if admins == nil {
				admins = []authz.Subject{}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return failed(enc.Encode(admins))
		}
		for _, a := range admins {
			fmt.Fprintln(cmd.OutOrStdout(), a)
		}
		return nil
	}
	return c
}

// estateChangeCmd is `admin estate grant|revoke <subject>`.
func estateChangeCmd(verb string) *cobra.Command {
	c := &cobra.Command{
		Use:   verb + " <subject>",
		Short: map[string]string{"grant": "Make a subject an estate admin", "revoke": "Make a subject no estate admin (never the last)"}[verb],
		Long:  estateLong,
		Args:  exactArgs("the subject (user:<id>, team:<id>#member or role:<id>#assignee)"),
	}
	cfg, checkEnv := settings(c, authzFlags...)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		subject, err := authz.ParseSubject(args[0])
		if err == nil && subject == authz.Everyone {
			err = errors.New("everyone (user:*) cannot be an estate admin: name a user, team or role")
		}
		if err != nil {
			return misuse("%v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fga, err := openAuthorizer(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		if verb == "grant" {
			if err := fga.GrantEstateAdminTo(ctx, subject); err != nil {
				return failed(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s is an estate admin\n", subject)
			return nil
		}
		if err := fga.RevokeEstateAdmin(ctx, subject); err != nil {
			return failed(err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s is not an estate admin (remove it from --estate-admins too, or the next start grants it again)\n", subject)
		return nil
	}
	return c
}

func navigatorsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "navigators [--prune] [--json]",
		Short: "Write the missing navigator tuples (and with --prune delete stale ones)",
		Long:  navigatorsLong,
		Args:  exactArgs(),
	}
	cfg, checkEnv := settings(c, authzFlags...)
	asJSON := jsonFlag(c.Flags())
	prune := c.Flags().Bool("prune", false, "also delete navigator tuples no grant asks for")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		fga, err := openAuthorizer(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		rep, err := fga.ReconcileNavigators(ctx, *prune)
		if err != nil {
			return failed(err)
		}
		if *asJSON {
			return failed(json.NewEncoder(cmd.OutOrStdout()).Encode(rep))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "read %d tuples: %d navigator tuples due, %d written, %d stale, %d pruned\n",
			rep.Tuples, rep.Wanted, rep.Written, rep.Stale, rep.Pruned)
		return nil
	}
	return c
}
