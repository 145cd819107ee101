package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
)

const maintenanceLong = `plan says what a run would do (a dry run of every step). run makes one pass over the table now:
compact → optimize_indices → cleanup (the steps given, in that order), as the table's policy,
protection and the read-only mode allow. --older-than replaces the policy's retention for this
run (versions committed longer ago than D are removed; the latest, tagged and branch versions
always stay). sweep visits every table once, as 'lancecat serve --maintenance-interval' does.
orphans reports, changing nothing, the files under each table's root that no live version
references (with what reconcile would do: delete only Lance files older than --grace, default
7 days; foreign objects are never deleted). reconcile repairs: per table, under its lease, it
scans again and deletes only what both the cleared report (--report FILE, the JSON of an
earlier 'orphans --json'; without it, a scan made first) and the fresh scan list.
Over the whole catalog (no id given) both also check drift above tables: __manifest rows
whose directory is gone (reconcile unlinks the row, deleting nothing), directories no row
names (reported only: never registered, never deleted), protection and policy records of
gone objects (reconcile clears them), bindings to gone warehouses and trash records of gone
data (reported only); drift is repaired only from a report older than --drift-grace (1h).
The table id is its parts joined by --delimiter. Runs take the table's lease, so they are safe
while replicas serve. Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve'
and read the same LANCECAT_* environment. No server is needed.`

// maintenanceCmd runs maintenance directly on the roots: it parses, opens the service and
// prints; what each command does is package maintenance's.
func maintenanceCmd() *cobra.Command {
	return group("maintenance", "Plan or run a table's maintenance, sweep every table, report and repair orphans", maintenanceLong,
		maintenanceRunCmd("plan"), maintenanceRunCmd("run"), maintenanceSweepCmd(), maintenanceOrphansCmd("orphans"), maintenanceOrphansCmd("reconcile"))
}

// openMaintenance opens the maintenance service on the roots cfg names, for a CLI pass.
func openMaintenance(cfg *app.Config, checkEnv func() error) (context.Context, func(), *maintenance.Service, error) {
	if err := checkEnv(); err != nil {
		return nil, nil, nil, err
	}
	// A run deletes files: stop between steps on a signal rather than die in the middle of one.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	svc, err := app.OpenMaintenance(ctx, *cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		stop()
		return nil, nil, nil, failed(err)
	}
	svc.Origin = maintenance.OriginCLI
	return ctx, stop, svc, nil
}

// tableID parses a table or namespace id joined by delim.
func tableID(s, delim string) (ident.ID, error) {
	id := ident.ID(strings.Split(s, delim))
	if err := id.Validate(delim); err != nil {
		return nil, misuse("%v", err)
	}
	return id, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return failed(enc.Encode(v))
}

// maintenanceRunCmd is `maintenance plan <id>` (a dry run of every step) or `maintenance run <id>`.
func maintenanceRunCmd(verb string) *cobra.Command {
	c := &cobra.Command{
		Use:   verb + " <table id>",
		Short: map[string]string{"plan": "Say what a run would do (a dry run of every step)", "run": "Run compact → optimize_indices → cleanup on a table now"}[verb],
		Long:  maintenanceLong,
		Args:  exactArgs("the table id"),
	}
	cfg, checkEnv := settings(c, rootFlags...)
	asJSON := jsonFlag(c.Flags())
	var dryRun *bool
	var steps *string
	var olderThan *time.Duration
	if verb == "run" {
		dryRun = c.Flags().Bool("dry-run", false, "say what would be done; change nothing")
		steps = c.Flags().String("steps", "", "comma-separated steps: compact, optimize_indices, cleanup (default all)")
		olderThan = c.Flags().Duration("older-than", 0, "remove versions committed longer ago than this, whatever the policy's retention")
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		opts := maintenance.RunOptions{DryRun: verb == "plan"}
		if verb == "run" {
			opts.DryRun = *dryRun
			if *steps != "" {
				opts.Steps = strings.Split(*steps, ",")
				if err := maintenance.ValidateSteps(opts.Steps); err != nil {
					return misuse("--steps: %v", err)
				}
			}
			if cmd.Flags().Changed("older-than") {
				if *olderThan < 0 {
					return misuse("--older-than cannot be negative")
				}
				d := *olderThan
				opts.OlderThan = &d
			}
		}
		id, err := tableID(args[0], cfg.Delimiter)
		if err != nil {
			return err
		}
		ctx, stop, svc, err := openMaintenance(cfg, checkEnv)
		if err != nil {
			return err
		}
		defer stop()
		// A step at a time on a terminal; nothing in a pipe or a file.
		if !opts.DryRun && isTerminal(cmd.ErrOrStderr()) && isTerminal(os.Stdout) {
			total := int64(len(opts.Steps))
			if total == 0 {
				total = 3
			}
			bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(cmd.ErrOrStderr()),
				progressbar.OptionSetDescription("maintenance "+args[0]), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			opts.OnStep = func(sr maintenance.StepReport) {
				bar.Describe(fmt.Sprintf("maintenance %s: %s %s", args[0], sr.Step, sr.Status))
				_ = bar.Add(1)
			}
			defer func() { _ = bar.Finish() }()
		}
		rep, runErr := svc.RunTable(ctx, id, opts)
		if len(rep.Steps) == 0 && runErr != nil {
			return failed(runErr)
		}
		if *asJSON {
			if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
				return err
			}
		} else {
			printRunReport(cmd.OutOrStdout(), rep)
		}
		return failed(runErr)
	}
	return c
}

func maintenanceSweepCmd() *cobra.Command {
	c := &cobra.Command{Use: "sweep", Short: "Visit every table once, as 'serve --maintenance-interval' does", Long: maintenanceLong, Args: exactArgs()}
	cfg, checkEnv := settings(c, rootFlags...)
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, stop, svc, err := openMaintenance(cfg, checkEnv)
		if err != nil {
			return err
		}
		defer stop()
		rep, err := svc.Sweep(ctx)
		if err != nil {
			return failed(err)
		}
		stdout := cmd.OutOrStdout()
		if *asJSON {
			return printJSON(stdout, rep)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tOUTCOME\tREASON")
		for _, r := range rep.Results {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", ident.ID(r.ID).Join(cfg.Delimiter), r.Outcome, r.Reason)
		}
		_ = tw.Flush()
		fmt.Fprintf(stdout, "%d tables: %v\n", rep.Tables, rep.Counts)
		return nil
	}
	return c
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

// maintenanceOrphansCmd is `maintenance orphans` (the report) or `maintenance reconcile` (the repair).
func maintenanceOrphansCmd(verb string) *cobra.Command {
	c := &cobra.Command{
		Use: verb + " [namespace or table id]",
		Short: map[string]string{"orphans": "Report the files under each table's root no live version references (changes nothing)",
			"reconcile": "Repair: delete the orphans a cleared report and a fresh scan both list"}[verb],
		Long: maintenanceLong,
		Args: cobra.MaximumNArgs(1),
	}
	cfg, checkEnv := settings(c, rootFlags...)
	asJSON := jsonFlag(c.Flags())
	grace := c.Flags().Duration("grace", maintenance.DefaultOrphanGrace, "how old an unreferenced file must be before reconcile deletes it")
	driftGrace := c.Flags().Duration("drift-grace", maintenance.DefaultDriftGrace, "how old the cleared report must be before reconcile repairs drift above tables (rows, records)")
	var dryRun *bool
	var reportFile *string
	if verb == "reconcile" {
		dryRun = c.Flags().Bool("dry-run", false, "say what would be removed; change nothing")
		reportFile = c.Flags().String("report", "", "the cleared report (JSON of 'orphans --json') to act on; default a scan made first")
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		opts := maintenance.OrphanOptions{Grace: *grace, DriftGrace: *driftGrace}
		if len(args) == 1 {
			id, err := tableID(args[0], cfg.Delimiter)
			if err != nil {
				return err
			}
			opts.Under = id
		}
		var cleared maintenance.OrphanReport
		if verb == "reconcile" && *reportFile != "" {
			data, err := os.ReadFile(*reportFile)
			if err != nil {
				return misuse("--report: %v", err)
			}
			if err := json.Unmarshal(data, &cleared); err != nil {
				return misuse("--report %s: %v", *reportFile, err)
			}
		}
		ctx, stop, svc, err := openMaintenance(cfg, checkEnv)
		if err != nil {
			return err
		}
		defer stop()
		var rep maintenance.OrphanReport
		if verb == "orphans" {
			rep, err = svc.ScanOrphans(ctx, opts)
		} else {
			if *reportFile == "" {
				if cleared, err = svc.ScanOrphans(ctx, opts); err != nil {
					return failed(err)
				}
			}
			rep, err = svc.Reconcile(ctx, cleared, *dryRun, opts)
		}
		if err != nil {
			return failed(err)
		}
		stdout := cmd.OutOrStdout()
		if *asJSON {
			return printJSON(stdout, rep)
		}
		printOrphanReport(stdout, rep, verb, cfg.Delimiter)
		return nil
	}
	return c
}

func printOrphanReport(stdout io.Writer, rep maintenance.OrphanReport, verb, delim string) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tKEY\tCATEGORY\tBYTES\tMODIFIED\tACTION\tREASON")
	for _, f := range rep.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", ident.ID(f.Table).Join(delim), printable(f.Key), f.Category, f.Size,
			f.ModTime.UTC().Format(time.RFC3339), f.Action, f.Reason)
	}
	for _, r := range rep.Refused {
		fmt.Fprintf(tw, "%s\t\trefused\t\t\t\t%s\n", ident.ID(r.Table).Join(delim), r.Reason)
	}
	_ = tw.Flush()
	if len(rep.Drift) > 0 {
		fmt.Fprintln(stdout)
		tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DRIFT\tROOT\tOBJECT\tLOCATION\tACTION\tREASON")
		for _, f := range rep.Drift {
			obj := "-"
			if len(f.ID) > 0 {
				obj = f.Kind + " " + ident.ID(f.ID).Join(delim)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Category, dashIfEmpty(f.Root), obj, dashIfEmpty(printable(f.Location)), f.Action, f.Reason)
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(stdout, "%d tables, %d checked, %d findings, %d drift findings", rep.Tables, rep.Checked, len(rep.Findings), len(rep.Drift))
	if verb == "reconcile" {
		what, fixed := "removed", "repaired"
		if rep.DryRun {
			what, fixed = "would remove", "would repair"
		}
		fmt.Fprintf(stdout, "; %s %d files (%d bytes); %s %d drift findings", what, len(rep.Removed), rep.BytesRemoved, fixed, len(rep.Repaired))
	}
	fmt.Fprintln(stdout)
	for cat, why := range rep.Skipped {
		fmt.Fprintf(stdout, "not checked: %s (%s)\n", cat, why)
	}
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
