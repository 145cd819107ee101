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
	"strings"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// maxStagedManifest bounds the staged manifest create_table_version reads (a manifest lists
// every fragment: large tables have manifests of megabytes, not gigabytes).
const maxStagedManifest = 256 << 20

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
	p := table.StorePath(manifestPath)
	dir := table.StorePath(t.URI)
	rel := p
	if dir != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(p, dir+"/"); !ok {
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
	full := table.BranchPrefix(branch) + rel
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
