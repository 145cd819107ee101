package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

const datasetLong = `Inspect a Lance dataset directly (a local path, file:// or s3:// URI); no catalog is involved.
S3 settings come from the same LANCECAT_S3_* variables and --s3-* flags as 'lancecat serve'.`

// datasetCmd is `lancecat dataset …`: each command parses its flags, calls package lance and
// prints; nothing else.
func datasetCmd() *cobra.Command {
	return group("dataset", "Inspect, scan, import and clean up a Lance dataset (local or s3://)", datasetLong,
		datasetInspectCmd(), datasetVersionsCmd(), datasetTagsCmd(), datasetCleanupCmd(), datasetScanCmd(), datasetImportCmd())
}

// datasetFlags are the flags every dataset command takes: where the dataset is and how to print.
type datasetFlags struct {
	s3     storage.S3Config
	branch string
	asJSON bool
}

func addDatasetFlags(fs *pflag.FlagSet, withJSON bool) *datasetFlags {
	d := &datasetFlags{}
	envStr := func(p *string, name, env, def, usage string) {
		*p = os.Getenv(env)
		if *p == "" {
			*p = def
		}
		fs.StringVar(p, name, *p, usage+" (env "+env+")")
	}
	envBool := func(p *bool, name, env, usage string) {
		*p, _ = strconv.ParseBool(os.Getenv(env))
		fs.BoolVar(p, name, *p, usage+" (env "+env+")")
	}
	envStr(&d.s3.Endpoint, "s3-endpoint", "LANCECAT_S3_ENDPOINT", "", "S3-compatible endpoint host[:port] (empty: AWS)")
	envStr(&d.s3.Region, "s3-region", "LANCECAT_S3_REGION", "us-east-1", "S3 region")
	envStr(&d.s3.AccessKey, "s3-access-key", "LANCECAT_S3_ACCESS_KEY", "", "S3 access key id")
	envStr(&d.s3.SecretKey, "s3-secret-key", "LANCECAT_S3_SECRET_KEY", "", "S3 secret access key")
	envBool(&d.s3.PathStyle, "s3-path-style", "LANCECAT_S3_PATH_STYLE", "address buckets by path (MinIO)")
	envBool(&d.s3.Insecure, "s3-allow-http", "LANCECAT_S3_ALLOW_HTTP", "plain HTTP to the S3 endpoint")
	fs.StringVar(&d.branch, "branch", "", "branch to read (default main)")
	if withJSON {
		fs.BoolVar(&d.asJSON, "json", false, "print JSON (for scripts)")
	}
	return d
}

// open opens the dataset at uri on the branch the flags name.
func (d *datasetFlags) open(ctx context.Context, uri string) (*lance.Dataset, error) {
	ds, err := lance.OpenURI(ctx, uri, d.s3)
	if err != nil {
		return nil, failed(err)
	}
	ds, err = ds.Branch(d.branch)
	return ds, failed(err)
}

// onDataset is a command's run that opens the dataset its argument names (open) and calls fn.
func (d *datasetFlags) onDataset(fn func(ctx context.Context, cmd *cobra.Command, ds *lance.Dataset) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := context.Background()
		ds, err := d.open(ctx, args[0])
		if err != nil {
			return err
		}
		return fn(ctx, cmd, ds)
	}
}

// print writes v as indented JSON with --json, else as text.
func (d *datasetFlags) print(w io.Writer, v any, text func(io.Writer) error) error {
	if d.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return failed(enc.Encode(v))
	}
	return failed(text(w))
}

// datasetCommand is one `dataset` command taking the dataset's URI.
func datasetCommand(use, short string) *cobra.Command {
	return &cobra.Command{Use: use + " [flags] <uri>", Short: short, Long: datasetLong, Args: exactArgs("the dataset's URI")}
}

func datasetInspectCmd() *cobra.Command {
	c := datasetCommand("inspect", "Schema, fragments, row counts, indices, tags and branches of a version")
	d := addDatasetFlags(c.Flags(), true)
	version := c.Flags().Uint64("version", 0, "version to inspect (default latest)")
	c.RunE = d.onDataset(func(ctx context.Context, cmd *cobra.Command, ds *lance.Dataset) error {
		r, err := ds.Inspect(ctx, *version)
		if err != nil {
			return failed(err)
		}
		return d.print(cmd.OutOrStdout(), r, r.WriteText)
	})
	return c
}

func datasetVersionsCmd() *cobra.Command {
	c := datasetCommand("versions", "Every version with its operation, row count and tags")
	d := addDatasetFlags(c.Flags(), true)
	c.RunE = d.onDataset(func(ctx context.Context, cmd *cobra.Command, ds *lance.Dataset) error {
		v, err := ds.VersionHistory(ctx)
		if err != nil {
			return failed(err)
		}
		return d.print(cmd.OutOrStdout(), v, func(w io.Writer) error { return lance.WriteVersionsText(w, v) })
	})
	return c
}

func datasetTagsCmd() *cobra.Command {
	c := datasetCommand("tags", "The dataset's tags")
	d := addDatasetFlags(c.Flags(), true)
	c.RunE = d.onDataset(func(ctx context.Context, cmd *cobra.Command, ds *lance.Dataset) error {
		t, err := ds.ListTags(ctx)
		if err != nil {
			return failed(err)
		}
		if t == nil {
			t = []lance.Tag{}
		}
		return d.print(cmd.OutOrStdout(), t, func(w io.Writer) error { return lance.WriteTagsText(w, t) })
	})
	return c
}

func datasetCleanupCmd() *cobra.Command {
	c := datasetCommand("cleanup", "Remove old versions and the files only they reference")
	d := addDatasetFlags(c.Flags(), true)
	olderThan := c.Flags().Duration("older-than", 0, "remove versions committed longer ago than this (e.g. 168h)")
	keepLast := c.Flags().Int("keep-last", 0, "keep the newest N versions")
	dryRun := c.Flags().Bool("dry-run", false, "only report what would be removed")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *keepLast < 0 || *olderThan < 0 {
			return misuse("--keep-last and --older-than cannot be negative")
		}
		ctx := context.Background()
		ds, err := d.open(ctx, args[0])
		if err != nil {
			return err
		}
		opts := lance.CleanupOptions{KeepLast: *keepLast, DryRun: *dryRun}
		if *olderThan > 0 {
			opts.OlderThan = time.Now().Add(-*olderThan)
		}
		r, err := ds.Cleanup(ctx, opts)
		if err != nil {
			return failed(err)
		}
		return d.print(cmd.OutOrStdout(), r, r.WriteText)
	}
	return c
}

func datasetScanCmd() *cobra.Command {
	c := datasetCommand("scan", "Print the rows of a version (JSON lines or an Arrow IPC stream)")
	d := addDatasetFlags(c.Flags(), false)
	var f scanFlags
	version := c.Flags().Uint64("version", 0, "version to scan (default latest)")
	c.Flags().StringVar(&f.tag, "tag", "", "scan the version a tag names")
	c.Flags().StringVar(&f.columns, "columns", "", "comma-separated columns (default all)")
	c.Flags().Int64Var(&f.limit, "limit", 0, "at most N rows (0: all)")
	c.Flags().Int64Var(&f.offset, "offset", 0, "skip the first N rows")
	c.Flags().StringVar(&f.format, "format", "json", "json (one object per line) or arrow (IPC stream)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if f.format != "json" && f.format != "arrow" {
			return misuse("--format %q: json or arrow", f.format)
		}
		if f.limit < 0 || f.offset < 0 {
			return misuse("--limit and --offset cannot be negative")
		}
		ctx := context.Background()
		ds, err := d.open(ctx, args[0])
		if err != nil {
			return err
		}
		return failed(datasetScan(ctx, ds, *version, f, cmd.OutOrStdout()))
	}
	return c
}

func datasetImportCmd() *cobra.Command {
	c := datasetCommand("import", "Append an Arrow IPC file or stream (or overwrite with it, or create from it)")
	d := addDatasetFlags(c.Flags(), true)
	var f importFlags
	c.Flags().StringVar(&f.from, "from", "", "Arrow IPC file (ARROW1, Feather v2) or stream to import (- for stdin; required)")
	c.Flags().StringVar(&f.mode, "mode", "append", "append, overwrite or create")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if f.from == "" {
			return misuse("--from is required (an Arrow IPC file or stream, - for stdin)")
		}
		if _, err := importMode(f.mode); err != nil {
			return misuse("%v", err)
		}
		ctx := context.Background()
		ds, err := d.open(ctx, args[0])
		if err != nil {
			return err
		}
		f.progress = cmd.ErrOrStderr()
		r, err := datasetImport(ctx, ds, f, cmd.InOrStdin())
		if err != nil {
			return failed(err)
		}
		return d.print(cmd.OutOrStdout(), r, r.WriteText)
	}
	return c
}
