package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/maintenance"
)

const trashLong = `Recoverable drops (--trash-grace-days) keep a dropped table's bytes until its deadline. purge
deletes what is past it: each table's bytes in the root it lived in (its warehouse's, for a
warehouse namespace; a deactivated warehouse is skipped), then its record; a namespace's record
once no table under it is left. Safe while replicas serve and alongside other purges.
Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve' and read the same
LANCECAT_* environment. No server is needed.`

// trashCmd lists and purges the trash directly on the roots: it parses the flags and opens the
// roots; what the commands do is maintenance.ListTrash and RunTrashPurge.
func trashCmd() *cobra.Command {
	list := &cobra.Command{
		Use:   "list [--expired] [--json]",
		Short: "List recoverable drops and their deadlines",
		Long:  trashLong,
		Args:  exactArgs(),
	}
	listCfg, listEnv := settings(list, rootFlags...)
	expired := list.Flags().Bool("expired", false, "only records past their deadline")
	listJSON := jsonFlag(list.Flags())
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		return withTrash(cmd, listCfg, listEnv, *listJSON, func(ctx context.Context, trash *governance.Trash, _ *slog.Logger, out maintenance.Output) error {
			return maintenance.ListTrash(ctx, trash, *expired, out)
		})
	}

	purge := &cobra.Command{
		Use:   "purge [--dry-run] [--limit N] [--json]",
		Short: "Delete the bytes and records of drops past their deadline",
		Long:  trashLong,
		Args:  exactArgs(),
	}
	purgeCfg, purgeEnv := settings(purge, append(rootFlags, "trash-", "authz", "openfga-")...)
	dryRun := purge.Flags().Bool("dry-run", false, "say what would be purged; change nothing")
	limit := purge.Flags().Int("limit", 0, "act on at most this many expired records; 0: all")
	purgeJSON := jsonFlag(purge.Flags())
	purge.RunE = func(cmd *cobra.Command, _ []string) error {
		if *limit < 0 {
			return misuse("--limit must be 0 (all) or more, not %d", *limit)
		}
		return withTrash(cmd, purgeCfg, purgeEnv, *purgeJSON, func(ctx context.Context, trash *governance.Trash, logger *slog.Logger, out maintenance.Output) error {
			// Purged objects' grants are revoked in OpenFGA, or queued when it cannot be reached.
			if !*dryRun {
				if why := app.AttachRevoker(ctx, *purgeCfg, trash); why != "" {
					logger.Warn("grants of purged objects will be queued, not revoked", "reason", why)
				}
			}
			return maintenance.RunTrashPurge(ctx, trash, logger, maintenance.PurgeOptions{DryRun: *dryRun, Limit: *limit}, out)
		})
	}
	return group("trash", "List recoverable drops, purge those past their deadline", trashLong, list, purge)
}

// withTrash opens the trash on the roots cfg names and runs do with it.
func withTrash(cmd *cobra.Command, cfg *app.Config, checkEnv func() error, asJSON bool,
	do func(context.Context, *governance.Trash, *slog.Logger, maintenance.Output) error) error {
	if err := checkEnv(); err != nil {
		return err
	}
	logger, err := app.NewLogger(cmd.ErrOrStderr(), cfg.LogLevel)
	if err != nil {
		return misuse("%v", err)
	}
	// A purge deletes bytes: stop between records on a signal rather than die in the middle of one.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The setup logs are for a server; an operator command keeps quiet unless something fails.
	trash, err := app.OpenTrash(ctx, *cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return failed(err)
	}
	out := maintenance.Output{Delimiter: cfg.Delimiter, JSON: asJSON, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	return failed(do(ctx, trash, logger, out))
}
