package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report as a table: one row per check (group, outcome, name, and why for
// a failure or a skip), then the totals.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\tRESULT\tCHECK\n")
	for _, res := range r.Results {
		line := res.Name
		if res.Detail != "" {
			line += " — " + oneLine(res.Detail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", res.Group, strings.ToUpper(string(res.Outcome)), line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var total time.Duration
	for _, res := range r.Results {
		total += res.Duration
	}
	server := r.Server
	if server == "" {
		server = "server"
	}
	_, err := fmt.Fprintf(w, "\n%s at %s: %d passed, %d failed, %d skipped (%s in checks)\n",
		server, r.URL, r.Passed, r.Failed, r.Skipped, total.Round(time.Millisecond))
	return err
}

// WriteJSON writes the report as one JSON document.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
