package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

const datasetUsage = `Usage: lancecat dataset <command> [flags] <uri>

Inspect a Lance dataset directly (a local path, file:// or s3:// URI).

Commands:
  inspect    schema, fragments, row counts, indices, tags and branches of a version
  versions   every version with its operation, row count and tags
  tags       the dataset's tags
  cleanup    remove old versions and the files only they reference
  scan       print the rows of a version (JSON lines or an Arrow IPC stream)
  import     append an Arrow IPC file or stream (or overwrite with it)

Run 'lancecat dataset <command> --help' for its flags. S3 settings come from
the same LANCECAT_S3_* variables and --s3-* flags as 'lancecat serve'.
`

// datasetCmd parses flags, calls package lance and prints; nothing else.
func datasetCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || wantsHelp(args[:1]) {
		fmt.Fprint(stdout, datasetUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lancecat dataset "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	var s3 storage.S3Config
	envStr := func(p *string, name, env, usage string) {
		*p = os.Getenv(env)
		fs.StringVar(p, name, *p, usage+" (env "+env+")")
	}
	envBool := func(p *bool, name, env, usage string) {
		*p, _ = strconv.ParseBool(os.Getenv(env))
		fs.BoolVar(p, name, *p, usage+" (env "+env+")")
	}
	envStr(&s3.Endpoint, "s3-endpoint", "LANCECAT_S3_ENDPOINT", "S3-compatible endpoint host[:port] (empty: AWS)")
	envStr(&s3.Region, "s3-region", "LANCECAT_S3_REGION", "S3 region")
	if s3.Region == "" {
		s3.Region = "us-east-1"
	}
	envStr(&s3.AccessKey, "s3-access-key", "LANCECAT_S3_ACCESS_KEY", "S3 access key id")
	envStr(&s3.SecretKey, "s3-secret-key", "LANCECAT_S3_SECRET_KEY", "S3 secret access key")
	envBool(&s3.PathStyle, "s3-path-style", "LANCECAT_S3_PATH_STYLE", "address buckets by path (MinIO)")
	envBool(&s3.Insecure, "s3-allow-http", "LANCECAT_S3_ALLOW_HTTP", "plain HTTP to the S3 endpoint")
	version := new(uint64)
	branch := fs.String("branch", "", "branch to read (default main)")
	var olderThan time.Duration
	var scan scanFlags
	var imp importFlags
	var keepLast int
	var dryRun bool
	switch sub {
	case "inspect":
		fs.Uint64Var(version, "version", 0, "version to inspect (default latest)")
	case "versions", "tags":
	case "cleanup":
		fs.DurationVar(&olderThan, "older-than", 0, "remove versions committed longer ago than this (e.g. 168h)")
		fs.IntVar(&keepLast, "keep-last", 0, "keep the newest N versions")
		fs.BoolVar(&dryRun, "dry-run", false, "only report what would be removed")
	case "scan":
		fs.Uint64Var(version, "version", 0, "version to scan (default latest)")
		fs.StringVar(&scan.tag, "tag", "", "scan the version a tag names")
		fs.StringVar(&scan.columns, "columns", "", "comma-separated columns (default all)")
		fs.Int64Var(&scan.limit, "limit", 0, "at most N rows (0: all)")
		fs.Int64Var(&scan.offset, "offset", 0, "skip the first N rows")
		fs.StringVar(&scan.format, "format", "json", "json (one object per line) or arrow (IPC stream)")
	case "import":
		fs.StringVar(&imp.from, "from", "", "Arrow IPC file or stream to import (- for stdin)")
		fs.StringVar(&imp.mode, "mode", "append", "append, overwrite or create")
	default:
		fmt.Fprintf(stderr, "lancecat dataset: unknown command %q\n\n%s", sub, datasetUsage)
		return 2
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: lancecat dataset %s [flags] <uri>\n\n", sub)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "lancecat dataset %s: %v\n", sub, err)
		return 1
	}
	ds, err := lance.OpenURI(ctx, fs.Arg(0), s3)
	if err != nil {
		return fail(err)
	}
	if ds, err = ds.Branch(*branch); err != nil {
		return fail(err)
	}
	var out any
	var text func(io.Writer) error
	switch sub {
	case "inspect":
		r, err := ds.Inspect(ctx, *version)
		if err != nil {
			return fail(err)
		}
		out, text = r, r.WriteText
	case "versions":
		v, err := ds.VersionHistory(ctx)
		if err != nil {
			return fail(err)
		}
		out, text = v, func(w io.Writer) error { return lance.WriteVersionsText(w, v) }
	case "tags":
		t, err := ds.ListTags(ctx)
		if err != nil {
			return fail(err)
		}
		if t == nil {
			t = []lance.Tag{}
		}
		out, text = t, func(w io.Writer) error { return lance.WriteTagsText(w, t) }
	case "scan":
		if err := datasetScan(ctx, ds, *version, scan, stdout); err != nil {
			return fail(err)
		}
		return 0
	case "import":
		r, err := datasetImport(ctx, ds, imp, os.Stdin)
		if err != nil {
			return fail(err)
		}
		out, text = r, r.WriteText
	case "cleanup":
		opts := lance.CleanupOptions{KeepLast: keepLast, DryRun: dryRun}
		if olderThan > 0 {
			opts.OlderThan = time.Now().Add(-olderThan)
		}
		r, err := ds.Cleanup(ctx, opts)
		if err != nil {
			return fail(err)
		}
		out, text = r, r.WriteText
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	} else {
		err = text(stdout)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}
