package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
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

// trashCmd lists and purges the trash directly on the roots (no server needed).
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
	switch sub {
	case "list":
		err = trashList(ctx, trash, cfg.Delimiter, *expired, *asJSON, stdout, stderr)
	case "purge":
		// Purged objects' grants are revoked in OpenFGA, or queued when it cannot be reached.
		if !*dryRun {
			if why := server.AttachRevoker(ctx, cfg, trash); why != "" {
				logger.Warn("grants of purged objects will be queued, not revoked", "reason", why)
			}
		}
		err = trashPurge(ctx, trash, logger, cfg.Delimiter, governance.PurgeOptions{DryRun: *dryRun, Limit: *limit}, *asJSON, stdout)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

// trashEntry is one record as list shows it.
type trashEntry struct {
	registry.Trash
	Expired bool `json:"expired"`
}

func trashList(ctx context.Context, trash *governance.Trash, delim string, onlyExpired, asJSON bool, stdout, stderr io.Writer) error {
	recs, unreadable, err := trash.TrashRecords(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	entries := []trashEntry{}
	for _, r := range recs {
		if e := r.Expired(now); e || !onlyExpired {
			entries = append(entries, trashEntry{Trash: r, Expired: e})
		}
	}
	for _, k := range unreadable {
		fmt.Fprintf(stderr, "unreadable trash record %s: never purged; fix or remove it by hand\n", k)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tLOCATION\tWAREHOUSE\tDROPPED\tEXPIRES\tSTATE")
	for _, e := range entries {
		state := "recoverable"
		switch {
		case e.Purging:
			state = "purging"
		case e.Undropping:
			state = "undropping"
		case e.Expired:
			state = "expired"
		}
		wh := "-"
		if e.Binding != nil {
			wh = e.Binding.WarehouseID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Kind, ident.ID(e.ID).Join(delim), orDash(e.Location), wh,
			e.DroppedAt.Format(time.RFC3339), e.ExpiresAt.Format(time.RFC3339), state)
	}
	return tw.Flush()
}

func trashPurge(ctx context.Context, trash *governance.Trash, logger *slog.Logger, delim string, opts governance.PurgeOptions, asJSON bool, stdout io.Writer) error {
	rep, err := trash.PurgeExpired(ctx, opts)
	if err != nil {
		return err
	}
	for _, it := range rep.Items {
		if it.Action == governance.PurgeSkipped {
			logger.Warn("trash record skipped", "kind", it.Kind, "id", ident.ID(it.ID).Join(delim), "reason", it.Reason)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tKIND\tID\tLOCATION\tROOT\tOBJECTS\tBYTES\tGRANTS\tREASON")
	queuedWhy := ""
	for _, it := range rep.Items {
		root := it.RootURI
		if root == "" && it.Kind == registry.KindTable {
			root = "catalog"
		}
		if it.Grants == governance.GrantsQueued {
			queuedWhy = it.GrantsWhy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", it.Action, it.Kind, ident.ID(it.ID).Join(delim), orDash(it.Location),
			orDash(root), it.Objects, it.Bytes, orDash(it.Grants), orDash(it.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	summary := fmt.Sprintf("%d purged, %d kept (in use), %d skipped, %d not expired yet", rep.Count(governance.PurgePurged),
		rep.Count(governance.PurgeKept), rep.Count(governance.PurgeSkipped), rep.Pending)
	if opts.DryRun {
		summary = fmt.Sprintf("dry run: %d would be purged, %d would be kept (in use), %d skipped, %d not expired yet",
			rep.Count(governance.PurgeWouldPurge), rep.Count(governance.PurgeWouldKeep), rep.Count(governance.PurgeSkipped), rep.Pending)
	}
	if rep.Truncated {
		summary += "; --limit reached, run again for the rest"
	}
	if len(rep.Unreadable) > 0 {
		summary += fmt.Sprintf("; %d unreadable records left alone", len(rep.Unreadable))
	}
	if rep.RevocationsDone > 0 {
		summary += fmt.Sprintf("; %d queued grant revocations done", rep.RevocationsDone)
	}
	if rep.RevocationsQueued > 0 {
		summary += fmt.Sprintf("; the grants of %d purged objects are QUEUED for revocation, not revoked", rep.RevocationsQueued)
		if queuedWhy != "" {
			summary += " (" + queuedWhy + ")"
		}
		summary += ": they are revoked by the next purge that reaches OpenFGA (a server's purge loop, or this command with --authz openfga)"
	}
	_, err = fmt.Fprintln(stdout, summary)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
