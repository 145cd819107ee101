package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/internal/buildinfo"
)

// The commands for people (namespace, table, grant, project, warehouse) talk to a served catalog
// over HTTP through the Go client module, as any other service does; the operator commands
// (trash, maintenance, admin, apikey, …) act on a root directly and stay as they were.
//
// Exit codes of the remote commands, beyond 0 (done), 1 (any other failure) and 2 (misuse):
// 3 the object is not there, 4 it conflicts (already exists, not empty, modified concurrently),
// 5 the server refused (no or a bad key, no permission). Documented in remoteExitCodes (every
// remote command's help) and docs/cli.md.

const (
	exitNotFound = 3
	exitConflict = 4
	exitRefused  = 5
)

// remoteExitCodes is the paragraph every remote command's help ends with.
const remoteExitCodes = `
Connection: --url (LANCECAT_URL, default http://127.0.0.1:2333) and --api-key (LANCECAT_API_KEY);
--json prints JSON for scripts instead of a table. Ids are typed with their parts joined by --sep
(default "."): shop.items is the table items in the namespace shop.

Exit codes: 0 done; 1 failed (server unreachable, internal error); 2 misuse (bad flag or argument,
or the server said the input is invalid); 3 not found; 4 conflict (already exists, not empty,
concurrent modification); 5 refused (unauthenticated or permission denied).`

// exitCodeOf is the exit code of a failure of the work: a *client.Problem by its spec code (or,
// for a code the table does not name, its HTTP status); 1 for anything else.
func exitCodeOf(err error) int {
	var p *client.Problem
	switch {
	case errors.Is(err, client.ErrNamespaceNotFound), errors.Is(err, client.ErrTableNotFound),
		errors.Is(err, client.ErrTableIndexNotFound), errors.Is(err, client.ErrTableTagNotFound),
		errors.Is(err, client.ErrTransactionNotFound), errors.Is(err, client.ErrTableVersionNotFound),
		errors.Is(err, client.ErrTableColumnNotFound), errors.Is(err, client.ErrTableBranchNotFound):
		return exitNotFound
	case errors.Is(err, client.ErrNamespaceAlreadyExists), errors.Is(err, client.ErrTableAlreadyExists),
		errors.Is(err, client.ErrTableIndexAlreadyExists), errors.Is(err, client.ErrTableTagAlreadyExists),
		errors.Is(err, client.ErrTableBranchAlreadyExists), errors.Is(err, client.ErrNamespaceNotEmpty),
		errors.Is(err, client.ErrConcurrentModification):
		return exitConflict
	case errors.Is(err, client.ErrPermissionDenied), errors.Is(err, client.ErrUnauthenticated):
		return exitRefused
	case errors.Is(err, client.ErrInvalidInput):
		return 2
	case errors.As(err, &p):
		switch p.Status {
		case http.StatusNotFound:
			return exitNotFound
		case http.StatusConflict:
			return exitConflict
		case http.StatusUnauthorized, http.StatusForbidden:
			return exitRefused
		}
	}
	return 1
}

// remote is what a remote command runs with: the connection flags and the output.
type remote struct {
	url, apiKey, delimiter, sep string
	json                        bool
	timeout                     time.Duration
}

// envOr is the environment variable name's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// remoteGroup is a group of remote commands: the connection flags are persistent flags on it, so
// every subcommand takes them (before or after its arguments).
func remoteGroup(use, short string, subs func(r *remote) []*cobra.Command) *cobra.Command {
	r := &remote{}
	g := group(use, short, short+"\n"+remoteExitCodes, subs(r)...)
	fs := g.PersistentFlags()
	// The variables are read when a command runs, not as the flags' defaults: --help would
	// otherwise print the key in the environment.
	fs.StringVar(&r.url, "url", "", "the catalog's base URL (default $LANCECAT_URL, else "+defaultURL+")")
	fs.StringVar(&r.apiKey, "api-key", "", "an API key, sent as x-api-key (default $LANCECAT_API_KEY)")
	fs.StringVar(&r.delimiter, "delimiter", "", `the server's id delimiter, its --delimiter (default $LANCECAT_DELIMITER, else "$")`)
	fs.StringVar(&r.sep, "sep", ".", "the separator of an id's parts on this command line")
	fs.BoolVar(&r.json, "json", false, "print JSON (for scripts)")
	fs.DurationVar(&r.timeout, "timeout", 5*time.Minute, "give up on a request after this long")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			long := s.Long
			if long == "" {
				long = s.Short
			}
			s.Long = strings.TrimSpace(long+"\n"+remoteExitCodes) + "\n"
			walk(s)
		}
	}
	walk(g)
	return g
}

// defaultURL is where `lancecat serve` listens with no flags.
const defaultURL = "http://127.0.0.1:2333"

// client connects to the catalog as the flags say (a flag not given: its variable, else the
// default).
func (r *remote) client() (*client.Client, error) {
	if r.url == "" {
		r.url = envOr("LANCECAT_URL", defaultURL)
	}
	if r.apiKey == "" {
		r.apiKey = os.Getenv("LANCECAT_API_KEY")
	}
	if r.delimiter == "" {
		r.delimiter = envOr("LANCECAT_DELIMITER", client.DefaultDelimiter)
	}
	opts := []client.Option{
		client.WithDelimiter(r.delimiter),
		client.WithRetries(2, 200*time.Millisecond),
		client.WithUserAgent("lancecat-cli/" + buildinfo.Get().Version),
		client.WithHTTPClient(&http.Client{Timeout: r.timeout}),
	}
	if r.apiKey != "" {
		opts = append(opts, client.WithAPIKey(r.apiKey))
	}
	c, err := client.New(r.url, opts...)
	if err != nil {
		return nil, misuse("--url %q: %v", r.url, err)
	}
	return c, nil
}

// id splits a command-line id into its parts ("" is the root namespace: no parts).
func (r *remote) id(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if r.sep == "" {
		return nil, misuse("--sep must not be empty")
	}
	parts := strings.Split(s, r.sep)
	for _, p := range parts {
		if p == "" {
			return nil, misuse("id %q has an empty part", s)
		}
	}
	return parts, nil
}

// show prints v as JSON with --json, else calls table with a tabwriter whose columns line up.
func (r *remote) show(w io.Writer, v any, table func(tw *tabwriter.Writer)) error {
	if r.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return failed(enc.Encode(v))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	table(tw)
	return failed(tw.Flush())
}

// row writes one tab-separated row.
func row(tw io.Writer, cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(tw, strings.Join(s, "\t"))
}

// orDash is s, or "-" when it is empty (a table cell is never blank, so columns stay readable).
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// when is t as RFC 3339 in UTC, or "-".
func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// val is *p, or "-" for nil.
func val[T any](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
