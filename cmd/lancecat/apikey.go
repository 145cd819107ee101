package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/server"
)

const apikeyUsage = `Usage:
  lancecat apikey create --principal user:<id> [--description text] [root flags]
  lancecat apikey revoke [root flags] <key id>
  lancecat apikey list [root flags]

API keys are kept hashed on the control root; create prints the key once, on stdout.
Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve' and read the same
LANCECAT_* environment.
`

// apikeyCmd administers API keys directly on the control root (no server needed).
func apikeyCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, apikeyUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lancecat apikey "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	principal := fs.String("principal", "", "who the key acts as: user:<id> (create)")
	description := fs.String("description", "", "a note shown by list (create)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), apikeyUsage) }
	switch sub {
	case "create", "revoke", "list":
	case "help", "-h", "--help":
		fmt.Fprint(stdout, apikeyUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "lancecat apikey: unknown command %q\n\n%s", sub, apikeyUsage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := envErrs.Err(); err != nil {
		fmt.Fprintln(stderr, "lancecat apikey:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bucket, _, err := server.OpenControlRoot(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lancecat apikey:", err)
		return 1
	}
	keys := authz.NewAPIKeys(registry.NewStore(bucket))
	fail := func(err error) int {
		fmt.Fprintln(stderr, "lancecat apikey "+sub+":", err)
		return 1
	}
	switch sub {
	case "create":
		if fs.NArg() != 0 {
			fmt.Fprint(stderr, apikeyUsage)
			return 2
		}
		p, err := authz.ParsePrincipal(*principal)
		if err != nil {
			fmt.Fprintln(stderr, "lancecat apikey create: --principal:", err)
			return 2
		}
		key, rec, err := keys.Create(ctx, p, *description)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stderr, "created api key %s for %s; it is shown only now\n", rec.ID, rec.Principal)
	case "revoke":
		if fs.NArg() != 1 {
			fmt.Fprint(stderr, apikeyUsage)
			return 2
		}
		rec, err := keys.Revoke(ctx, fs.Arg(0))
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "revoked api key %s (%s)\n", rec.ID, rec.Principal)
	case "list":
		recs, err := keys.List(ctx)
		if err != nil {
			return fail(err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPRINCIPAL\tCREATED\tREVOKED\tDESCRIPTION")
		for _, r := range recs {
			revoked := "-"
			if r.RevokedAt != nil {
				revoked = r.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable(r.ID), printable(r.Principal),
				r.CreatedAt.Format(time.RFC3339), revoked, printable(r.Description))
		}
		if err := tw.Flush(); err != nil {
			return fail(err)
		}
	}
	return 0
}

// printable is s safe to print on a terminal: whatever a key's creator wrote (its description is
// free text, and records can be written by anyone with the control root), no escape sequence,
// carriage return, tab, bidirectional override or other invisible character reaches the terminal
// to redraw or forge rows. Such runes (and invalid UTF-8) are written as Go escapes (\x1b, \r,
// \u202e), and a backslash as \\, so the escaped form is unambiguous.
func printable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\r', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
