package namespace

// Table versions. The store of versions is the table's own _versions/ directory (per branch):
// listing and describing read it, and with table version management on, create_table_version
// is the commit point: the client stages a manifest next to its final name and the catalog
// publishes it there with put-if-absent. Lance clients, lancecat's own commits and LanceDB's
// directory namespace therefore all see one history.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// maxStagedManifest bounds the staged manifest create_table_version reads (a manifest lists
// every fragment: large tables have manifests of megabytes, not gigabytes).
const maxStagedManifest = 256 << 20

// storePath is uri in object-store form: the path below the bucket (or below "/").
func storePath(uri string) string {
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

// branchPrefix is where branch's files live inside the table directory.
func branchPrefix(branch string) string {
	if branch == "" || branch == "main" {
		return ""
	}
	return lance.TreeDir + branch + "/"
}

// versionPath is the object-store path of key (relative to branch's directory) of table t.
func (n *Namespace) versionPath(t *entry, branch, key string) string {
	p := storePath(t.URI)
	if p != "" {
		p += "/"
	}
	return p + branchPrefix(branch) + key
}

func (n *Namespace) tableVersion(t *entry, branch string, info lance.VersionInfo) catalog.TableVersion {
	return catalog.TableVersion{
		Version: info.Version, ManifestPath: n.versionPath(t, branch, info.Key),
		ManifestSize: info.Size, ETag: info.ETag, Timestamp: info.Timestamp,
	}
}

// ListVersions lists the versions of t on q.Branch. A table or branch without versions
// has an empty list (clients read that as "no versions yet").
func (h *TableHandle) ListVersions(ctx context.Context, q catalog.VersionQuery) ([]catalog.TableVersion, string, error) {
	n, t := h.n, h.t
	ds, err := n.dataset(t, q.Branch)
	if err != nil {
		return nil, "", err
	}
	if _, err := n.settledLatest(ctx, t, q.Branch); err != nil {
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
		return nil, "", tableErr(t, err)
	}
	out := make([]catalog.TableVersion, len(infos))
	for i, info := range infos {
		out[i] = n.tableVersion(t, q.Branch, info)
	}
	next := ""
	if q.Limit > 0 && len(out) == q.Limit {
		next = strconv.FormatUint(out[len(out)-1].Version, 10)
	}
	return out, next, nil
}

// DescribeVersion describes version of t on branch (nil: the latest);
// TableVersionNotFound if it has no manifest.
func (h *TableHandle) DescribeVersion(ctx context.Context, branch string, version *int64) (catalog.TableVersion, error) {
	n, t := h.n, h.t
	ds, err := n.dataset(t, branch)
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
	if _, err := n.settledLatest(ctx, t, branch); err != nil {
		return catalog.TableVersion{}, err
	}
	infos, err := ds.ListVersions(ctx, opts)
	if err != nil && !errors.Is(err, lance.ErrDatasetNotFound) {
		return catalog.TableVersion{}, tableErr(t, err)
	}
	if len(infos) == 0 || (version != nil && infos[0].Version != uint64(*version)) {
		if version == nil {
			return catalog.TableVersion{}, nserr.TableVersionNotFoundf("table %s has no version yet", quoteID(t.ID))
		}
		return catalog.TableVersion{}, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *version)
	}
	return n.tableVersion(t, branch, infos[0]), nil
}

// CreateVersion publishes the staged manifest of nv as version nv.Version of t: it is
// copied with put-if-absent to its final name in the same _versions/ directory, then the
// staging file is deleted. It is a transaction of one entry (batch.go): it claims the version,
// so a batch holding it is a conflict, and its record answers describe_transaction. It returns
// only once the version is durable, and no error once it is: a failure to delete the staging
// file only leaves garbage. A version that already exists is ConcurrentModification (409, code
// 14).
func (h *TableHandle) CreateVersion(ctx context.Context, nv catalog.NewTableVersion) (catalog.TableVersion, error) {
	_, vs, err := h.n.CommitTableVersions(ctx, catalog.TxnCreateTableVersion, []catalog.VersionEntry{{Table: h.t.ID, NewTableVersion: nv}})
	if err != nil {
		return catalog.TableVersion{}, err
	}
	return vs[0], nil
}

// prepare checks nv against t and reads its staged manifest (step 1 of batch.go): nothing is
// written.
func (n *Namespace) prepare(ctx context.Context, t *entry, nv catalog.NewTableVersion) (*prepared, error) {
	if nv.Version <= 0 {
		return nil, nserr.InvalidInputf("version %d is not a table version", nv.Version)
	}
	version := uint64(nv.Version)
	var scheme lance.NamingScheme
	switch strings.ToUpper(nv.NamingScheme) {
	case "", "V2":
		scheme = lance.NamingV2
	case "V1":
		scheme = lance.NamingV1
	default:
		return nil, nserr.InvalidInputf("naming_scheme %q is not V1 or V2", nv.NamingScheme)
	}
	staged, branch, prefix, err := n.stagedKey(t, nv.ManifestPath)
	if err != nil {
		return nil, err
	}
	if nv.Branch != "" && nv.Branch != "main" && nv.Branch != branch {
		return nil, nserr.InvalidInputf("manifest_path %q is not on branch %q", nv.ManifestPath, nv.Branch)
	}
	if nv.Branch != "" && nv.Branch != "main" && branch == "" {
		return nil, nserr.InvalidInputf("manifest_path %q is not on branch %q", nv.ManifestPath, nv.Branch)
	}
	ds, err := n.dataset(t, branch)
	if err != nil {
		return nil, err
	}
	store := ds.Store()
	final := scheme.ManifestKey(version)
	if staged == final {
		return nil, nserr.InvalidInputf("manifest_path %q is the final name of version %d, not a staged manifest", nv.ManifestPath, version)
	}

	data, err := readStaged(ctx, store, staged)
	if errors.Is(err, storage.ErrNotFound) {
		if _, serr := store.Stat(ctx, final); serr == nil {
			return nil, nserr.ConcurrentModificationf("version %d of table %s already exists", version, quoteID(t.ID))
		}
		return nil, nserr.InvalidInputf("no staged manifest at %q", nv.ManifestPath)
	}
	if err != nil {
		return nil, err
	}
	if nv.ManifestSize != nil && *nv.ManifestSize != int64(len(data)) {
		return nil, nserr.InvalidInputf("manifest_size %d does not match the staged manifest's %d bytes", *nv.ManifestSize, len(data))
	}
	mf, err := lance.DecodeManifestFile(data)
	if err != nil {
		return nil, nserr.InvalidInputf("the staged manifest at %q is not a Lance manifest: %v", nv.ManifestPath, err)
	}
	if got := mf.Manifest.GetVersion(); got != version {
		return nil, nserr.InvalidInputf("the staged manifest holds version %d, not %d", got, version)
	}
	if err := n.checkScheme(ctx, ds, scheme, version); err != nil {
		return nil, err
	}
	return &prepared{
		t: t, nv: nv, branch: branch, store: store, staged: staged, final: final, prefix: prefix,
		version: version, data: data, mf: mf,
	}, nil
}

// checkScheme refuses a V1 name in a V2 directory and the reverse: Lance refuses to open a
// _versions/ directory that mixes them.
func (n *Namespace) checkScheme(ctx context.Context, ds *lance.Dataset, scheme lance.NamingScheme, version uint64) error {
	if version == 1 {
		return nil
	}
	cur, err := ds.NamingScheme(ctx)
	if errors.Is(err, lance.ErrDatasetNotFound) || err != nil {
		return nil
	}
	if cur != scheme {
		return nserr.InvalidInputf("naming_scheme %s does not match the table's %s manifests", scheme, cur)
	}
	return nil
}

// stagedKey resolves a client's manifest_path to a key relative to its branch's directory of
// t. It returns the branch the path is on and, when the client's form ends in that key, the
// client's own prefix for it (so the answer can use the same form).
func (n *Namespace) stagedKey(t *entry, manifestPath string) (key, branch, prefix string, err error) {
	bad := func(why string) (string, string, string, error) {
		return "", "", "", nserr.InvalidInputf("manifest_path %q %s", manifestPath, why)
	}
	if manifestPath == "" {
		return bad("is empty")
	}
	p := storePath(manifestPath)
	table := storePath(t.URI)
	rel := p
	if table != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(p, table+"/"); !ok {
			return bad("is not inside the table's location " + t.URI)
		}
	}
	if i := strings.LastIndex(rel, "/"+lance.VersionsDir); i >= 0 && strings.HasPrefix(rel, lance.TreeDir) {
		branch = rel[len(lance.TreeDir):i]
		if err := lance.CheckBranchName(branch); err != nil {
			return bad("names an invalid branch")
		}
		rel = rel[i+1:]
	}
	name, ok := strings.CutPrefix(rel, lance.VersionsDir)
	if !ok || name == "" || strings.Contains(name, "/") || strings.Contains(name, "..") {
		return bad("is not a staged manifest in the table's _versions/ directory")
	}
	full := branchPrefix(branch) + rel
	if strings.HasSuffix(manifestPath, rel) {
		prefix = strings.TrimSuffix(manifestPath, rel)
	}
	if err := storage.ValidateKey(t.Location + "/" + full); err != nil {
		return bad(err.Error())
	}
	return rel, branch, prefix, nil
}

// readStaged reads a staged manifest, bounded.
func readStaged(ctx context.Context, store storage.Reader, key string) ([]byte, error) {
	rc, info, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size > maxStagedManifest {
		return nil, nserr.InvalidInputf("the staged manifest is %d bytes, more than %d", info.Size, maxStagedManifest)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxStagedManifest+1))
	if err != nil {
		return nil, fmt.Errorf("namespace: read staged manifest %s: %w", key, err)
	}
	if len(data) > maxStagedManifest {
		return nil, nserr.InvalidInputf("the staged manifest is more than %d bytes", maxStagedManifest)
	}
	return data, nil
}

// DeleteVersions removes the manifests of the versions in ranges ([start, end); end < 0:
// through the latest). The latest version and tagged ones are kept. It returns how many were
// deleted.
func (h *TableHandle) DeleteVersions(ctx context.Context, branch string, ranges []lance.VersionRange) (int, error) {
	n, t := h.n, h.t
	ds, err := n.branchDataset(ctx, t, branch)
	if err != nil {
		return 0, err
	}
	deleted, _, err := ds.DeleteVersions(ctx, ranges)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return 0, nil
	}
	if err != nil {
		return len(deleted), tableErr(t, err)
	}
	return len(deleted), nil
}
