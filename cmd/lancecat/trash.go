package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/server"
)

const trashUsage = `Usage:
  lancecat trash list [--expired] [--json] [root flags]
  lancecat trash purge [--dry-run] [--limit N] [--json] [root flags]

Recoverable drops (--trash-grace-days) keep a dropped table's bytes until its deadline. purge
deletes what is past it: each table's bytes in the root it lived in (its warehouse's, for a
warehouse namespace; a deactivated warehouse is skipped), then its record; a namespace's record
once no table under it is left. Safe while replicas serve and alongside other purges.
Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve' and read the same
LANCECAT_* environment.
`

// trashCmd lists and purges the trash directly on the roots (no server needed): it parses the
// flags and opens the roots; what the commands do is maintenance.ListTrash and RunTrashPurge.
func trashCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, trashUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lancecat trash "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	expired := fs.Bool("expired", false, "only records past their deadline (list)")
	asJSON := fs.Bool("json", false, "print JSON")
	dryRun := fs.Bool("dry-run", false, "say what would be purged; change nothing (purge)")
	limit := fs.Int("limit", 0, "act on at most this many expired records; 0: all (purge)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), trashUsage) }
	switch sub {
	case "list", "purge":
	case "help", "-h", "--help":
		fmt.Fprint(stdout, trashUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "lancecat trash: unknown command %q\n\n%s", sub, trashUsage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *limit < 0 {
		fmt.Fprint(stderr, trashUsage)
		return 2
	}
	if err := envErrs.Err(); err != nil {
		fmt.Fprintln(stderr, "lancecat trash:", err)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "lancecat trash "+sub+":", err)
		return 1
	}
	logger, err := server.NewLogger(stderr, cfg.LogLevel)
	if err != nil {
		return fail(err)
	}
	// A purge deletes bytes: stop between records on a signal rather than die in the middle of one.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The setup logs are for a server; an operator command keeps quiet unless something fails.
	trash, err := server.OpenTrash(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(err)
	}
	out := maintenance.Output{Delimiter: cfg.Delimiter, JSON: *asJSON, Stdout: stdout, Stderr: stderr}
	switch sub {
	case "list":
		err = maintenance.ListTrash(ctx, trash, *expired, out)
	case "purge":
		// Purged objects' grants are revoked in OpenFGA, or queued when it cannot be reached.
		if !*dryRun {
			if why := server.AttachRevoker(ctx, cfg, trash); why != "" {
				logger.Warn("grants of purged objects will be queued, not revoked", "reason", why)
			}
		}
		err = maintenance.RunTrashPurge(ctx, trash, logger, maintenance.PurgeOptions{DryRun: *dryRun, Limit: *limit}, out)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}
