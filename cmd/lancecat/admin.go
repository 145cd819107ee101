package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/server"
)

const adminUsage = `Usage:
  lancecat admin estate list [--json] [authz flags]
  lancecat admin estate grant <subject> [authz flags]
  lancecat admin estate revoke <subject> [authz flags]
  lancecat admin navigators [--prune] [--json] [authz flags]

Estate admins (admin on the catalog) mint projects, read the event stream and administer raw
access. A subject is user:<id>, team:<id>#member or role:<id>#assignee. 'lancecat serve
--estate-admins' only grants its list at start (a bootstrap); these commands list, add and remove
estate admins for good (drop a revoked admin from --estate-admins too, or the next start grants
it again). The last estate admin cannot be revoked.

'navigators' makes the navigator tuples (who sees the namespaces and warehouses above what they
hold a rung on) what the store's grants ask for: it writes the missing ones, and with --prune
deletes the stale ones. Every server start writes the missing ones in the background; run it by
hand after a rolling upgrade from a version without navigator has finished (grants made by old
replicas meanwhile wrote none). It reads every tuple of the store once and is idempotent.
Authz flags (--authz openfga, --openfga-url, --openfga-store, --openfga-token) are those of
'lancecat serve' and read the same LANCECAT_* environment.
`

// adminCmd administers estate admins directly in OpenFGA (no server needed).
func adminCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	switch args[0] {
	case "estate":
		return estateCmd(args[1:], stdout, stderr)
	case "navigators":
		return navigatorsCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminUsage)
		return 0
	}
	fmt.Fprintf(stderr, "lancecat admin: unknown command %q\n\n%s", args[0], adminUsage)
	return 2
}

func estateCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lancecat admin estate "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	asJSON := fs.Bool("json", false, "print JSON (list)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), adminUsage) }
	wantArgs := 1
	switch sub {
	case "list":
		wantArgs = 0
	case "grant", "revoke":
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "lancecat admin estate: unknown command %q\n\n%s", sub, adminUsage)
		return 2
	}
	// The subject may come before or after the flags.
	var positional []string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		positional, args = args[:1], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	positional = append(positional, fs.Args()...)
	if len(positional) != wantArgs {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	if err := envErrs.Err(); err != nil {
		fmt.Fprintln(stderr, "lancecat admin estate:", err)
		return 2
	}
	var subject authz.Subject
	if wantArgs == 1 {
		s, err := authz.ParseSubject(positional[0])
		if err == nil && s == authz.Everyone {
			err = errors.New("everyone (user:*) cannot be an estate admin: name a user, team or role")
		}
		if err != nil {
			fmt.Fprintln(stderr, "lancecat admin estate "+sub+":", err)
			return 2
		}
		subject = s
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "lancecat admin estate "+sub+":", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fga, err := server.OpenAuthorizer(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	switch sub {
	case "list":
		admins, err := fga.EstateAdmins(ctx)
		if err != nil {
			return fail(err)
		}
		if *asJSON {
			if admins == nil {
				admins = []authz.Subject{}
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(admins); err != nil {
				return fail(err)
			}
			return 0
		}
		for _, a := range admins {
			fmt.Fprintln(stdout, a)
		}
	case "grant":
		if err := fga.GrantEstateAdminTo(ctx, subject); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "%s is an estate admin\n", subject)
	case "revoke":
		if err := fga.RevokeEstateAdmin(ctx, subject); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "%s is not an estate admin (remove it from --estate-admins too, or the next start grants it again)\n", subject)
	}
	return 0
}

func navigatorsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lancecat admin navigators", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	asJSON := fs.Bool("json", false, "print JSON")
	prune := fs.Bool("prune", false, "also delete navigator tuples no grant asks for")
	fs.Usage = func() { fmt.Fprint(fs.Output(), adminUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "lancecat admin navigators:", err)
		return code
	}
	if err := envErrs.Err(); err != nil {
		return fail(2, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	fga, err := server.OpenAuthorizer(ctx, cfg)
	if err != nil {
		return fail(1, err)
	}
	rep, err := fga.ReconcileNavigators(ctx, *prune)
	if err != nil {
		return fail(1, err)
	}
	if *asJSON {
		_ = json.NewEncoder(stdout).Encode(rep)
		return 0
	}
	fmt.Fprintf(stdout, "read %d tuples: %d navigator tuples due, %d written, %d stale, %d pruned\n",
		rep.Tuples, rep.Wanted, rep.Written, rep.Stale, rep.Pruned)
	return 0
}
