package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
)

const backupLong = `The grants are the one part of a catalog's state that is not in the object store: tables,
governance records (projects, warehouses, protection, API keys, the events journal) live under the
roots and are backed up with the object store's own versioning or replication; grants live in
OpenFGA's datastore. 'backup' writes every tuple of the OpenFGA store to a file (JSON Lines: a
header, one tuple a line, a trailer with the count); 'restore' writes such a file into the store
--openfga-store names (a fresh one after losing OpenFGA's database, created with the model if
missing). Restore checks the whole file first (a truncated file, or a tuple the model does not
have, is refused with its line and nothing is written), then writes in batches; it is idempotent,
so running it again converges. A backup reads the store page by page and is not a snapshot of one
instant: take it while the catalog is quiet (--read-only) if grants change meanwhile.
Authz flags (--authz openfga, --openfga-url, --openfga-store, --openfga-token) are those of
'lancecat serve' and read the same LANCECAT_* environment. No server is needed.`

// backupCmd is `admin backup [--out FILE]`.
func backupCmd() *cobra.Command {
	c := &cobra.Command{Use: "backup [--out FILE]", Short: "Write every grant (OpenFGA tuple) to a file", Long: backupLong, Args: exactArgs()}
	cfg, checkEnv := settings(c, authzFlags...)
	out := c.Flags().String("out", "", "the backup file (written beside and renamed into place, so a failed backup leaves no file); empty: stdout")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		fga, err := openAuthorizer(ctx, cfg, checkEnv)
		if err != nil {
			return err
		}
		if *out == "" {
			n, err := fga.Backup(ctx, cmd.OutOrStdout())
			if err != nil {
				return failed(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "backed up %d tuples of store %s\n", n, fga.Store().ID)
			return nil
		}
		n, err := writeFileAtomically(*out, func(w io.Writer) (int, error) { return fga.Backup(ctx, w) })
		if err != nil {
			return failed(err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "backed up %d tuples of store %s to %s\n", n, fga.Store().ID, *out)
		return nil
	}
	return c
}

// restoreCmd is `admin restore FILE [--dry-run]`.
func restoreCmd() *cobra.Command {
	c := &cobra.Command{Use: "restore FILE [--dry-run] [--json]", Short: "Write the grants of a backup file into the OpenFGA store", Long: backupLong,
		Args: exactArgs("the backup file")}
	cfg, checkEnv := settings(c, authzFlags...)
	dryRun := c.Flags().Bool("dry-run", false, "check the file and say what would be restored; write nothing")
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		f, err := os.Open(args[0])
		if err != nil {
			return failed(err)
		}
		defer f.Close()
		h, n, err := authz.ReadBackup(f)
		if err != nil {
			return failed(fmt.Errorf("%s: %w", args[0], err))
		}
		report := struct {
			File      string    `json:"file"`
			FromStore string    `json:"from_store_id"`
			Created   time.Time `json:"created"`
			Tuples    int       `json:"tuples"`
			Restored  bool      `json:"restored"`
			IntoStore string    `json:"into_store_id,omitempty"`
		}{File: args[0], FromStore: h.StoreID, Created: h.Created, Tuples: n}
		if !*dryRun {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if err := checkEnv(); err != nil {
				return err
			}
			fga, err := app.EnsureAuthorizer(ctx, *cfg)
			if err != nil {
				return failed(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return failed(err)
			}
			if _, err := fga.Restore(ctx, f); err != nil {
				return failed(err)
			}
			report.Restored, report.IntoStore = true, fga.Store().ID
		}
		if *asJSON {
			return failed(json.NewEncoder(cmd.OutOrStdout()).Encode(report))
		}
		if report.Restored {
			fmt.Fprintf(cmd.OutOrStdout(), "restored %d tuples (backed up from store %s at %s) into store %s\n",
				n, h.StoreID, h.Created.Format(time.RFC3339), report.IntoStore)
			return nil
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s holds %d tuples (backed up from store %s at %s); --dry-run: nothing written\n",
			args[0], n, h.StoreID, h.Created.Format(time.RFC3339))
		return nil
	}
	return c
}

// writeFileAtomically writes path through write into a file beside it, synced, then renamed over
// path: an interrupted or failed write leaves no file that looks complete.
func writeFileAtomically(path string, write func(io.Writer) (int, error)) (int, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	n, err := write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return n, err
}
