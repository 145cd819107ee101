package maintenance

// What `lancecat trash list` and `lancecat trash purge` do once their flags are parsed and the
// trash opened (cmd/lancecat/trash.go keeps only the flags): list the records, run one purge,
// and print either for an operator (a table, or JSON).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Output is how a trash command prints.
type Output struct {
	Delimiter string    // joins id parts
	JSON      bool      // print JSON, not a table
	Stdout    io.Writer // the listing or report
	Stderr    io.Writer // warnings about unreadable records
}

// TrashEntry is one record as the list shows it.
type TrashEntry struct {
	registry.Trash
	Expired bool `json:"expired"`
}

// ListTrash prints every trash record of trash (only those past their deadline with
// onlyExpired), and warns on out.Stderr about each record that cannot be read.
func ListTrash(ctx context.Context, trash *governance.Trash, onlyExpired bool, out Output) error {
	recs, unreadable, err := trash.TrashRecords(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	entries := []TrashEntry{}
	for _, r := range recs {
		if e := r.Expired(now); e || !onlyExpired {
			entries = append(entries, TrashEntry{Trash: r, Expired: e})
		}
	}
	for _, k := range unreadable {
		fmt.Fprintf(out.Stderr, "unreadable trash record %s: never purged; fix or remove it by hand\n", k)
	}
	if out.JSON {
		enc := json.NewEncoder(out.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(out.Stdout, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Kind, ident.ID(e.ID).Join(out.Delimiter), orDash(e.Location), wh,
			e.DroppedAt.Format(time.RFC3339), e.ExpiresAt.Format(time.RFC3339), state)
	}
	return tw.Flush()
}

// RunTrashPurge runs one purge of trash (PurgeTrash), logs each record it skipped, and prints
// the report with a summary line.
func RunTrashPurge(ctx context.Context, trash *governance.Trash, logger *slog.Logger, opts PurgeOptions, out Output) error {
	rep, err := PurgeTrash(ctx, trash, opts)
	if err != nil {
		return err
	}
	delim := out.Delimiter
	for _, it := range rep.Items {
		if it.Action == PurgeSkipped {
			logger.Warn("trash record skipped", "kind", it.Kind, "id", ident.ID(it.ID).Join(delim), "reason", it.Reason)
		}
	}
	if out.JSON {
		enc := json.NewEncoder(out.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(out.Stdout, 0, 4, 2, ' ', 0)
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
	_, err = fmt.Fprintln(out.Stdout, summary(rep, queuedWhy))
	return err
}

// summary is the last line of a purge's printed report.
func summary(rep PurgeReport, queuedWhy string) string {
	s := fmt.Sprintf("%d purged, %d kept (in use), %d skipped, %d not expired yet", rep.Count(PurgePurged),
		rep.Count(PurgeKept), rep.Count(PurgeSkipped), rep.Pending)
	if rep.DryRun {
		s = fmt.Sprintf("dry run: %d would be purged, %d would be kept (in use), %d skipped, %d not expired yet",
			rep.Count(PurgeWouldPurge), rep.Count(PurgeWouldKeep), rep.Count(PurgeSkipped), rep.Pending)
	}
	if rep.Truncated {
		s += "; --limit reached, run again for the rest"
	}
	if len(rep.Unreadable) > 0 {
		s += fmt.Sprintf("; %d unreadable records left alone", len(rep.Unreadable))
	}
	if rep.RevocationsDone > 0 {
		s += fmt.Sprintf("; %d queued grant revocations done", rep.RevocationsDone)
	}
	if rep.RevocationsQueued > 0 {
		s += fmt.Sprintf("; the grants of %d purged objects are QUEUED for revocation, not revoked", rep.RevocationsQueued)
		if queuedWhy != "" {
			s += " (" + queuedWhy + ")"
		}
		s += ": they are revoked by the next purge that reaches OpenFGA (a server's purge loop, or this command with --authz openfga)"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
