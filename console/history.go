package console

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// A version's operation (Append, Overwrite, Delete, Update, Merge, CreateIndex, Rewrite, Restore,
// …) is recorded in the Lance transaction that made it, which the version doors do not report.
// The console reads it as any Lance client reads a table's history: it opens the dataset at the
// location the describe door answered the caller (so only a caller who may describe the table
// gets here), reads each listed version's manifest and its transaction (inline, or from
// _transactions/), and names the operation as Lance does (lance.OperationName). It reads a page
// of versions at most (versionPage), a few at a time.

const (
	// versionPage is how many versions the timeline shows at once (newest first, paged).
	versionPage = 50
	// historyConcurrency bounds the manifest and transaction reads of one page.
	historyConcurrency = 8
)

// operationNames opens the table at location and names the operation of each version; a version
// whose transaction cannot be read is left out of the answer (the page shows "—"). err says why
// nothing could be read at all (a location the console cannot open).
func operationNames(ctx context.Context, location string, options map[string]string, versions []int64) (map[int64]string, error) {
	s3, err := s3From(location, options)
	if err != nil {
		return nil, err
	}
	ds, err := lance.OpenURI(ctx, location, s3)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", location, err)
	}
	out := make(map[int64]string, len(versions))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, historyConcurrency)
	for _, v := range versions {
		if v <= 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ver, err := ds.OpenVersion(ctx, uint64(v))
			if err != nil {
				return
			}
			txn, err := ds.ReadTransaction(ctx, ver)
			if err != nil {
				return
			}
			mu.Lock()
			out[v] = lance.OperationName(txn)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, nil
}

// s3From is the S3 access for an s3:// location from the storage options the describe door
// vended (keys, with the session token of temporary ones; nothing for a local path).
func s3From(location string, options map[string]string) (storage.S3Config, error) {
	if !strings.HasPrefix(location, "s3://") && !strings.HasPrefix(location, "s3a://") {
		return storage.S3Config{}, nil
	}
	key, secret := options["aws_access_key_id"], options["aws_secret_access_key"]
	if key == "" || secret == "" {
		return storage.S3Config{}, fmt.Errorf("the catalog vended no credentials for %s", location)
	}
	cfg := storage.S3Config{AccessKey: key, SecretKey: secret, SessionToken: options["aws_session_token"], Region: options["aws_region"], Endpoint: options["aws_endpoint"]}
	if cfg.Endpoint == "" {
		cfg.Endpoint = options["endpoint"]
	}
	cfg.PathStyle = options["aws_virtual_hosted_style_request"] == "false" || cfg.Endpoint != ""
	cfg.Insecure = options["allow_http"] == "true" || options["aws_allow_http"] == "true"
	return cfg, nil
}
