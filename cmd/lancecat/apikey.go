package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/registry"
)

const apikeyLong = `API keys are kept hashed on the control root; create prints the key once, on stdout.
Root flags (--root, --control-root, --s3-*) are those of 'lancecat serve' and read the same
LANCECAT_* environment. No server is needed.`

func apikeyCmd() *cobra.Command {
	return group("apikey", "Create, revoke and list API keys (kept hashed on the control root)", apikeyLong,
		apikeyCreateCmd(), apikeyRevokeCmd(), apikeyListCmd())
}

// openKeys opens the API key registry on the control root cfg names.
func openKeys(ctx context.Context, cfg *app.Config, checkEnv func() error) (*authz.APIKeys, error) {
	if err := checkEnv(); err != nil {
		return nil, err
	}
	bucket, _, err := app.OpenControlRoot(ctx, *cfg)
	if err != nil {
		return nil, failed(err)
	}
	return authz.NewAPIKeys(registry.NewStore(bucket)), nil
}

func apikeyCreateCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "create --principal user:<id> [--description text]",
		Short: "Create an API key for a principal; the key is printed once, on stdout",
		Long:  apikeyLong,
		Args:  exactArgs(),
	}
	cfg, checkEnv := settings(c, rootFlags...)
	principal := c.Flags().String("principal", "", "who the key acts as: user:<id> (required)")
	description := c.Flags().String("description", "", "a note shown by list")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *principal == "" {
			return misuse("--principal is required (user:<id>)")
		}
		p, err := authz.ParsePrincipal(*principal)
		if err != nil {
			return misuse("--principal: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		keys, err := openKeys(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		key, rec, err := keys.Create(ctx, p, *description)
		if err != nil {
			return failed(err)
		}
		fmt.Fprintln(cmd.OutOrStdout(), key)
		fmt.Fprintf(cmd.ErrOrStderr(), "created api key %s for %s; it is shown only now\n", rec.ID, rec.Principal)
		return nil
	}
	return c
}

func apikeyRevokeCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "revoke <key id>",
		Short: "Revoke an API key (its id, as list shows it)",
		Long:  apikeyLong,
		Args:  exactArgs("the key id"),
	}
	cfg, checkEnv := settings(c, rootFlags...)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		keys, err := openKeys(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		rec, err := keys.Revoke(ctx, args[0])
		if err != nil {
			return failed(err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revoked api key %s (%s)\n", rec.ID, rec.Principal)
		return nil
	}
	return c
}

func apikeyListCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List API keys (never the keys themselves)",
		Long:  apikeyLong,
		Args:  exactArgs(),
	}
	cfg, checkEnv := settings(c, rootFlags...)
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		keys, err := openKeys(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		recs, err := keys.List(ctx)
		if err != nil {
			return failed(err)
		}
		stdout := cmd.OutOrStdout()
		if *asJSON {
			// Never the key's hash: a script listing keys has no use for it.
			type key struct {
				ID          string     `json:"id"`
				Principal   string     `json:"principal"`
				Description string     `json:"description,omitempty"`
				CreatedAt   time.Time  `json:"created_at"`
				RevokedAt   *time.Time `json:"revoked_at,omitempty"`
			}
			out := make([]key, 0, len(recs))
			for _, r := range recs {
				out = append(out, key{r.ID, r.Principal, r.Description, r.CreatedAt, r.RevokedAt})
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return failed(enc.Encode(out))
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
		return failed(tw.Flush())
	}
	return c
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
