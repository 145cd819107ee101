package main

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/conformance"
)

// conformanceCmd is `lancecat conformance`: the Lance Namespace REST contract checked against
// any server of the spec (package conformance), a pass/fail/skip table or JSON, exit 1 when a
// check fails.
func conformanceCmd() *cobra.Command {
	var (
		url, apiKey, delimiter, prefix string
		headers, only, skipOps         []string
		asJSON                         bool
	)
	c := &cobra.Command{
		Use:   "conformance --url URL [--only GROUP] [--json]",
		Short: "Check a Lance Namespace REST server against the spec's contract",
		Long: `Check a Lance Namespace REST server (lancecat or any other) against the spec's contract:
every operation's success shape, the spec's error codes with their statuses, pagination,
idempotence, one winner of 8 concurrent creates and renames, id edge cases.

It speaks only HTTP. Everything it makes lives under one namespace with a random name
(conf_<hex>, or --prefix), dropped with Cascade at the end. It reads GET /v1/capabilities
when the server has it and skips what the server says it does not back (and any operation
named with --skip-op). A check answered 406 code 0 (the spec's "unsupported") is a skip with
the server's reason.

Groups: ` + strings.Join(conformance.Groups(), ", ") + `.

Exit codes: 0 every check passed or skipped, 1 a check failed or the run could not start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				return misuse("--url is required")
			}
			cfg := conformance.Config{URL: url, Delimiter: delimiter, Only: only, SkipOps: skipOps, Prefix: prefix}
			for _, g := range only {
				if !slices.Contains(conformance.Groups(), g) {
					return misuse("unknown group %q (groups: %s)", g, strings.Join(conformance.Groups(), ", "))
				}
			}
			hdr := map[string][]string{}
			for _, h := range headers {
				k, v, ok := strings.Cut(h, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return misuse("--header %q is not 'Name: value'", h)
				}
				hdr[strings.TrimSpace(k)] = append(hdr[strings.TrimSpace(k)], strings.TrimSpace(v))
			}
			if apiKey != "" {
				hdr["x-api-key"] = []string{apiKey}
			}
			cfg.Header = hdr
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			rep, err := conformance.Run(ctx, cfg)
			if err != nil {
				return failed(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				err = rep.WriteJSON(out)
			} else {
				err = rep.WriteTable(out)
			}
			if err != nil {
				return failed(err)
			}
			if !rep.OK() {
				return failed(fmt.Errorf("%d of %d checks failed", rep.Failed, len(rep.Results)))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&url, "url", os.Getenv("LANCECAT_CONFORMANCE_URL"), "the server's base URL, e.g. http://127.0.0.1:2333 (env LANCECAT_CONFORMANCE_URL)")
	f.StringVar(&apiKey, "api-key", os.Getenv("LANCECAT_API_KEY"), "sent as x-api-key (env LANCECAT_API_KEY)")
	f.StringArrayVar(&headers, "header", nil, "a header sent with every request, 'Name: value' (repeatable; e.g. 'Authorization: Bearer …')")
	f.StringSliceVar(&only, "only", nil, "run only these groups (repeatable or comma-separated)")
	f.StringSliceVar(&skipOps, "skip-op", nil, "treat these operation ids (the spec's operationId) as unbacked (repeatable or comma-separated)")
	f.StringVar(&delimiter, "delimiter", "", "the server's id delimiter when it is not the spec's default $")
	f.StringVar(&prefix, "prefix", "", "the run's namespace (default conf_<random hex>)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON instead of a table")
	return c
}
