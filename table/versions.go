package table

// Table versions. The store of versions is the table's own _versions/ directory (per branch):
// listing and describing read it, and with table version management on, create_table_version
// is the commit point: the client stages a manifest next to its final name and the catalog
// publishes it there with put-if-absent. Lance clients, lancecat's own commits and LanceDB's
// directory namespace therefore all see one history.

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// StorePath is uri in object-store form: the path below the bucket (or below "/").
func StorePath(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		u, err := url.Parse(uri)
		if err == nil {
			return strings.Trim(u.Path, "/")
		}
		rest := uri[i+3:]
		if j := strings.Index(rest, "/"); j >= 0 {
			return strings.Trim(rest[j:], "/")
		}
		return ""
	}
	return strings.Trim(uri, "/")
}

// BranchPrefix is where branch's files live inside the table directory.
func BranchPrefix(branch string) string {
	if branch == "" || branch == "main" {
		return ""
	}
	return lance.TreeDir + branch + "/"
}

// VersionPath is the object-store path of key (relative to branch's directory) of table t.
func VersionPath(t *catalog.Entry, branch, key string) string {
	p := StorePath(t.URI)
	if p != "" {
		p += "/"
	}
	return p + BranchPrefix(branch) + key
}

func tableVersion(t *catalog.Entry, branch string, info lance.VersionInfo) catalog.TableVersion {
	return catalog.TableVersion{
		Version: info.Version, ManifestPath: VersionPath(t, branch, info.Key),
		ManifestSize: info.Size, ETag: info.ETag, Timestamp: info.Timestamp,
	}
}

// ListVersions lists the versions of t on q.Branch. A table or branch without versions
// has an empty list (clients read that as "no versions yet").
func (h *Table) ListVersions(ctx context.Context, q catalog.VersionQuery) ([]catalog.TableVersion, string, error) {
	t := h.t
	ds, err := h.dataset(q.Branch)
	if err != nil {
		return nil, "", err
	}
	if _, err := h.root.SettledLatest(ctx, t, q.Branch); err != nil {
		return nil, "", err
	}
	opts := lance.ListVersionsOptions{Descending: q.Descending, Limit: q.Limit}
	if q.Token != "" {
		last, err := strconv.ParseUint(q.Token, 10, 64)
		if err != nil {
			return nil, "", nserr.InvalidInputf("page_token %q is not one this server gave", q.Token)
		}
		switch {
		case q.Descending && last <= 1:
			return []catalog.TableVersion{}, "", nil
		case q.Descending:
			opts.Start = last - 1
		default:
			opts.Start = last + 1
		}
	}
	infos, err := ds.ListVersions(ctx, opts)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return []catalog.TableVersion{}, "", nil
	}
	if err != nil {
		return nil, "", Err(t, err)
	}
	out := make([]catalog.TableVersion, len(infos))
	for i, info := range infos {
		out[i] = tableVersion(t, q.Branch, info)
	}
	next := ""
	if q.Limit > 0 && len(out) == q.Limit {
		next = strconv.FormatUint(out[len(out)-1].Version, 10)
	}
	return out, next, nil
}

// DescribeVersion describes version of t on branch (nil: the latest);
// TableVersionNotFound if it has no manifest.
func (h *Table) DescribeVersion(ctx context.Context, branch string, version *int64) (catalog.TableVersion, error) {
	t := h.t
	ds, err := h.dataset(branch)
	if err != nil {
		return catalog.TableVersion{}, err
	}
	opts := lance.ListVersionsOptions{Descending: true, Limit: 1}
	if version != nil {
		if *version <= 0 {
			return catalog.TableVersion{}, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *version)
		}
		opts.Start = uint64(*version)
	}
	if _, err := h.root.SettledLatest(ctx, t, branch); err != nil {
		return catalog.TableVersion{}, err
	}
	infos, err := ds.ListVersions(ctx, opts)
	if err != nil && !errors.Is(err, lance.ErrDatasetNotFound) {
		return catalog.TableVersion{}, Err(t, err)
	}
	if len(infos) == 0 || (version != nil && infos[0].Version != uint64(*version)) {
		if version == nil {
			return catalog.TableVersion{}, nserr.TableVersionNotFoundf("table %s has no version yet", quoteID(t.ID))
		}
		return catalog.TableVersion{}, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *version)
	}
	return tableVersion(t, branch, infos[0]), nil
}

// CreateVersion publishes the staged manifest of nv as version nv.Version of t: it is
// copied with put-if-absent to its final name in the same _versions/ directory, then the
// staging file is deleted. It is a transaction of one entry (batch.go): it claims the version,
// so a batch holding it is a conflict, and its record answers describe_transaction. It returns
// only once the version is durable, and no error once it is: a failure to delete the staging
// file only leaves garbage. A version that already exists is ConcurrentModification (409, code
// 14).
func (h *Table) CreateVersion(ctx context.Context, nv catalog.NewTableVersion) (catalog.TableVersion, error) {
	_, vs, err := h.root.CommitTableVersions(ctx, catalog.TxnCreateTableVersion, []catalog.VersionEntry{{Table: h.t.ID, NewTableVersion: nv}})
	if err != nil {
		return catalog.TableVersion{}, err
	}
	return vs[0], nil
}

// DeleteVersions removes the manifests of the versions in ranges ([start, end); end < 0:
// through the latest). The latest version and tagged ones are kept. It returns how many were
// deleted.
func (h *Table) DeleteVersions(ctx context.Context, branch string, ranges []lance.VersionRange) (int, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, err
	}
	deleted, _, err := ds.DeleteVersions(ctx, ranges)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return 0, nil
	}
	if err != nil {
		return len(deleted), Err(t, err)
	}
	return len(deleted), nil
}
