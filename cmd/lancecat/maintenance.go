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
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/server"
)

const maintenanceUsage = `Usage:
  lancecat maintenance plan [--json] [root flags] <table id>
  lancecat maintenance run [--dry-run] [--steps compact,optimize_indices,cleanup] [--older-than D] [--json] [root flags] <table id>
  lancecat maintenance sweep [--json] [root flags]
  lancecat maintenance orphans [--grace D] [--json] [root flags] [namespace or table id]
  lancecat maintenance reconcile [--dry-run] [--grace D] [--report FILE] [--json] [root flags] [namespace or table id]

plan says what a run would do (a dry run of every step). run makes one pass over the table now:
compact → optimize_indices → cleanup (the steps given, in that order), as the table's policy,
protection and the read-only mode allow. --older-than replaces the policy's retention for this
run (versions committed longer ago than D are removed; the latest, tagged and branch versions
always stay). sweep visits every table once, as 'lancecat serve --maintenance-interval' does.
orphans reports, changing nothing, the files under each table's root that no live version
references (with what reconcile would do: delete only Lance files older than --grace, default
7 days; foreign objects are never deleted). reconcile repairs: per table, under its lease, it
scans again and deletes only what both the cleared report (--report FILE, the JSON of an
earlier 'orphans --json'; without it, a scan made first) and the fresh scan list.
The table id is its parts joined by --delimiter. Runs take the table's lease, so they are safe
while replicas serve. Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve'
and read the same LANCECAT_* environment.
`

// maintenanceCmd runs maintenance directly on the roots (no server needed).
func maintenanceMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, maintenanceUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lancecat maintenance "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	asJSON := fs.Bool("json", false, "print JSON")
	dryRun := fs.Bool("dry-run", false, "say what would be done; change nothing (run)")
	steps := fs.String("steps", "", "comma-separated steps (run; default all)")
	olderThan := fs.Duration("older-than", -1, "remove versions committed longer ago than this, whatever the policy's retention (run)")
	grace := fs.Duration("grace", maintenance.DefaultOrphanGrace, "how old an unreferenced file must be before reconcile deletes it (orphans, reconcile)")
	reportFile := fs.String("report", "", "the cleared report (JSON of 'orphans --json') reconcile acts on (reconcile)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), maintenanceUsage) }
	wantArgs := 1
	switch sub {
	case "plan", "run":
	case "sweep":
		wantArgs = 0
	case "orphans", "reconcile":
		wantArgs = -1 // an optional namespace or table id
	case "help", "-h", "--help":
		fmt.Fprint(stdout, maintenanceUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "lancecat maintenance: unknown command %q\n\n%s", sub, maintenanceUsage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if (wantArgs >= 0 && fs.NArg() != wantArgs) || (wantArgs < 0 && fs.NArg() > 1) {
		fmt.Fprint(stderr, maintenanceUsage)
		return 2
	}
	if err := envErrs.Err(); err != nil {
		fmt.Fprintln(stderr, "lancecat maintenance:", err)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "lancecat maintenance "+sub+":", err)
		return 1
	}
	opts := maintenance.RunOptions{DryRun: *dryRun || sub == "plan"}
	if *steps != "" && sub == "run" {
		opts.Steps = strings.Split(*steps, ",")
		if err := maintenance.ValidateSteps(opts.Steps); err != nil {
			fmt.Fprintln(stderr, "lancecat maintenance:", err)
			return 2
		}
	}
	if *olderThan >= 0 && sub == "run" {
		d := *olderThan
		opts.OlderThan = &d
	}
	// A run deletes files: stop between steps on a signal rather than die in the middle of one.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	svc, err := server.OpenMaintenance(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(err)
	}
	svc.Origin = maintenance.OriginCLI
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if sub == "orphans" || sub == "reconcile" {
		return orphansCmd(ctx, svc, sub, fs.Arg(0), cfg.Delimiter, *dryRun, *grace, *reportFile, *asJSON, stdout, fail)
	}
	if sub == "sweep" {
		rep, err := svc.Sweep(ctx)
		if err != nil {
			return fail(err)
		}
		if *asJSON {
			_ = enc.Encode(rep)
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tOUTCOME\tREASON")
		for _, r := range rep.Results {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", ident.ID(r.ID).Join(cfg.Delimiter), r.Outcome, r.Reason)
		}
		_ = tw.Flush()
		fmt.Fprintf(stdout, "%d tables: %v\n", rep.Tables, rep.Counts)
		return 0
	}
	id := ident.ID(strings.Split(fs.Arg(0), cfg.Delimiter))
	if err := id.Validate(cfg.Delimiter); err != nil {
		return fail(err)
	}
	rep, err := svc.RunTable(ctx, id, opts)
	if len(rep.Steps) == 0 && err != nil {
		return fail(err)
	}
	if *asJSON {
		_ = enc.Encode(rep)
	} else {
		printRunReport(stdout, rep)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func printRunReport(w io.Writer, rep maintenance.RunReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tFRAGMENTS\tROWS REWRITTEN\tBYTES WRITTEN\tVERSIONS REMOVED\tBYTES FREED\tTOOK\tREASON")
	for _, s := range rep.Steps {
		frags := ""
		if s.FragmentsBefore > 0 {
			frags = fmt.Sprintf("%d→%d", s.FragmentsBefore, s.FragmentsAfter)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%v\t%s\n", s.Step, s.Status, frags, s.RowsRewritten, s.BytesRewritten,
			s.VersionsRemoved, s.BytesRemoved, time.Duration(s.DurationMS)*time.Millisecond, s.Reason)
	}
	_ = tw.Flush()
	what := "now at"
	if rep.DryRun {
		what = "dry run; still at"
	}
	fmt.Fprintf(w, "%s version %d\n", what, rep.Version)
}

// orphansCmd is 'maintenance orphans' (the report) and 'maintenance reconcile' (the repair).
func orphansCmd(ctx context.Context, svc *maintenance.Service, sub, under, delim string, dryRun bool, grace time.Duration,
	reportFile string, asJSON bool, stdout io.Writer, fail func(error) int) int {
	opts := maintenance.OrphanOptions{Grace: grace}
	if under != "" {
		opts.Under = ident.ID(strings.Split(under, delim))
		if err := opts.Under.Validate(delim); err != nil {
			return fail(err)
		}
	}
	var rep maintenance.OrphanReport
	var err error
	if sub == "orphans" {
		rep, err = svc.ScanOrphans(ctx, opts)
	} else {
		var cleared maintenance.OrphanReport
		if reportFile != "" {
			data, rerr := os.ReadFile(reportFile)
			if rerr != nil {
				return fail(rerr)
			}
			if rerr := json.Unmarshal(data, &cleared); rerr != nil {
				return fail(fmt.Errorf("--report %s: %w", reportFile, rerr))
			}
		} else if cleared, err = svc.ScanOrphans(ctx, opts); err != nil {
			return fail(err)
		}
		rep, err = svc.Reconcile(ctx, cleared, dryRun, opts)
	}
	if err != nil {
		return fail(err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tKEY\tCATEGORY\tBYTES\tMODIFIED\tACTION\tREASON")
	for _, f := range rep.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", ident.ID(f.Table).Join(delim), f.Key, f.Category, f.Size,
			f.ModTime.UTC().Format(time.RFC3339), f.Action, f.Reason)
	}
	for _, r := range rep.Refused {
		fmt.Fprintf(tw, "%s\t\trefused\t\t\t\t%s\n", ident.ID(r.Table).Join(delim), r.Reason)
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "%d tables, %d checked, %d findings", rep.Tables, rep.Checked, len(rep.Findings))
	if sub == "reconcile" {
		what := "removed"
		if rep.DryRun {
			what = "would remove"
		}
		fmt.Fprintf(stdout, "; %s %d files (%d bytes)", what, len(rep.Removed), rep.BytesRemoved)
	}
	fmt.Fprintln(stdout)
	for cat, why := range rep.Skipped {
		fmt.Fprintf(stdout, "not checked: %s (%s)\n", cat, why)
	}
	return 0
}
