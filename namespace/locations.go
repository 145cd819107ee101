package namespace

// Table locations and who owns them.
//
// A table location is a directory of the root's table area: never the root itself, nothing
// outside it (no "..", absolute path or other URI), and nothing that is, contains or lies inside a
// reserved path: the manifest table, the storage's temp area, the control root's default place,
// and whatever else the server keeps under this root (Options.Reserved: a control root configured
// elsewhere, a warehouse root inside the catalog root). tableLocation is the one gate every door
// that takes a location passes through.
//
// One table entry holds a location. A location equal to, inside or around another entry's (or a
// compatibility-mode root table's directory) is refused, and the check runs inside the manifest
// commit that registers it: two racing registers of one location cannot both win. A drop deletes
// a directory only when nothing else holds it, so an alias left by an older version (or written by
// another implementation) is unlinked, never emptied under its other owner.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

const (
	// tempArea is the storage backends' scratch space at a bucket's root (storage's reservedDir).
	tempArea = ".lancecat-tmp"
	// ControlDir is where the control root lives under a catalog root unless configured elsewhere.
	// It is reserved on every root, configured or not: a table never needs that name.
	ControlDir = "_lancecat"
)

// ErrLocationReserved is the cause of a location refused because it is, contains or lies inside a
// reserved path of the root.
var ErrLocationReserved = errors.New("namespace: the location is reserved")

// ErrLocationInUse is the cause of a location refused because a table of the root uses it (or a
// directory inside it, or one around it).
var ErrLocationInUse = errors.New("namespace: the location is in use by a table")

// reservedPaths are the built-in reserved paths plus extra (root-relative), cleaned; entries that
// are not a path inside the root are ignored.
func reservedPaths(extra []string) []string {
	out := []string{ManifestTable, tempArea, ControlDir}
	for _, p := range extra {
		p = path.Clean(strings.Trim(p, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ReservedUnder lists, relative to the root at rootURI, those of uris that lie inside it: what a
// server keeps under a root (its control root, a warehouse root…), for Options.Reserved. URIs are
// compared as the server addresses them: local paths (or file:// URIs) and scheme://bucket/prefix.
// A URI equal to the root, or around it, is not listed.
func ReservedUnder(rootURI string, uris ...string) []string {
	root, ok := splitURI(rootURI)
	if !ok {
		return nil
	}
	var out []string
	for _, u := range uris {
		p, ok := splitURI(u)
		if !ok || p.scheme != root.scheme || p.host != root.host {
			continue
		}
		rel := p.path
		if root.path != "" {
			var inside bool
			if rel, inside = strings.CutPrefix(p.path, root.path+"/"); !inside {
				continue
			}
		}
		if rel != "" {
			out = append(out, rel)
		}
	}
	return out
}

type splitLoc struct{ scheme, host, path string }

// splitURI splits a root URI; a local path is a file URI. The path is cleaned, without slashes
// at either end.
func splitURI(s string) (splitLoc, bool) {
	if s == "" {
		return splitLoc{}, false
	}
	if !strings.Contains(s, "://") {
		return splitLoc{scheme: "file", path: strings.Trim(path.Clean(filepath.ToSlash(s)), "/")}, true
	}
	u, err := url.Parse(s)
	if err != nil {
		return splitLoc{}, false
	}
	p := strings.Trim(path.Clean("/"+u.Path), "/")
	return splitLoc{scheme: strings.ToLower(u.Scheme), host: u.Host, path: p}, true
}

// overlaps reports whether directories a and b are one, or one lies inside the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// tableLocation is the gate of every location a client gives: it returns the location relative
// to the root, or InvalidInput (code 13) when it is the root, leaves it, or is, contains or lies
// inside a reserved path. Reserved paths compare case-insensitively: on a case-insensitive file
// system "_LanceCat" is the control root.
func (n *Namespace) tableLocation(loc string) (string, error) {
	rel, err := n.relativeLocation(loc)
	if err != nil {
		return "", err
	}
	folded := strings.ToLower(rel)
	for _, r := range n.reserved {
		if overlaps(folded, strings.ToLower(r)) {
			return "", nserr.Wrap(nserr.InvalidInput, ErrLocationReserved,
				fmt.Sprintf("location %q is not a table location: it overlaps the catalog's reserved path %q", loc, r))
		}
	}
	return rel, nil
}

// storedLocation is a location as a manifest row holds it, relative to the root, for comparing
// it with others ("" when it names nothing inside the root).
func (n *Namespace) storedLocation(loc string) string {
	loc = strings.TrimRight(loc, "/")
	if root := n.opts.RootURI; root != "" {
		if rel, ok := strings.CutPrefix(loc, root+"/"); ok {
			loc = rel
		} else if rel, ok := strings.CutPrefix(loc, "file://"+root+"/"); ok {
			loc = rel
		}
	}
	loc = strings.TrimLeft(loc, "/")
	if loc == "" || loc == "." {
		return ""
	}
	return path.Clean(loc)
}

// holder is a table entry other than except (an object id) whose location is loc, lies inside it
// or around it; nil if there is none. An entry whose stored location names the whole root holds
// everything.
func (n *Namespace) holder(s *snapshot, loc, except string) *row {
	for oid, r := range s.rows {
		if oid == except || r.Type != TypeTable || r.Location == nil {
			continue
		}
		l := n.storedLocation(*r.Location)
		if l == "" || overlaps(l, loc) {
			return r
		}
	}
	return nil
}

// v1Holder reports whether loc lies inside the directory of a compatibility-mode root table
// (<name>.lance with files, not deregistered, not backing a manifest entry: those are holders).
func (n *Namespace) v1Holder(ctx context.Context, s *snapshot, loc string) (bool, error) {
	if n.opts.DisableCompatibility {
		return false, nil
	}
	first, _, nested := strings.Cut(loc, "/")
	name, ok := strings.CutSuffix(first, ".lance")
	if !nested || !ok || name == "" || s.locations[first] {
		return false, nil
	}
	return n.v1Exists(ctx, first)
}

// checkUnheld refuses loc, in a commit's plan, when an entry other than except or a
// compatibility-mode root table holds it. The answer does not name the holder: it may be a table
// the caller cannot see.
func (n *Namespace) checkUnheld(ctx context.Context, s *snapshot, loc, except string) error {
	held := n.holder(s, loc, except) != nil
	if !held {
		var err error
		if held, err = n.v1Holder(ctx, s, loc); err != nil {
			return err
		}
	}
	if held {
		return nserr.Wrap(nserr.TableAlreadyExists, ErrLocationInUse,
			fmt.Sprintf("location %q is already held by another table (at it, inside it or around it): a location belongs to one table", loc))
	}
	return nil
}

// checkEmpty refuses to declare a table at a location that already holds objects: those are
// another dataset's (register adopts them), and a failed create would delete them.
func (n *Namespace) checkEmpty(ctx context.Context, loc string) error {
	page, err := n.root.List(ctx, loc+"/", storage.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("namespace: list %s: %w", loc, err)
	}
	if len(page.Objects) > 0 {
		return nserr.Wrap(nserr.TableAlreadyExists, ErrLocationInUse,
			fmt.Sprintf("location %q already holds data: register it instead of declaring a new table there", loc))
	}
	return nil
}

// deleteDir deletes every object under directory loc of an entry that has just been unlinked,
// if the bytes are that entry's alone. It deletes nothing (and succeeds: the unlink stands) when
// loc is not a table location of its own (reserved, the root, outside it) or when another entry or
// a compatibility-mode root table still holds it, inside or around: an alias from before
// locations were owned keeps its bytes.
func (n *Namespace) deleteDir(ctx context.Context, loc string) error {
	rel, owned, err := n.ownedAlone(ctx, loc)
	if err != nil || !owned {
		return err
	}
	objs, err := storage.ListAll(ctx, n.root, rel+"/")
	if err != nil {
		return fmt.Errorf("namespace: list %s: %w", rel, err)
	}
	for _, o := range objs {
		if err := n.root.Delete(ctx, o.Key); err != nil {
			return fmt.Errorf("namespace: delete %s: %w", o.Key, err)
		}
	}
	return nil
}

// ownedAlone reports whether stored location loc is a table location (rel, relative to the
// root) no entry of the newest manifest holds.
func (n *Namespace) ownedAlone(ctx context.Context, loc string) (rel string, owned bool, err error) {
	if rel, err = n.tableLocation(loc); err != nil {
		return "", false, nil
	}
	s, err := n.snapshot(ctx)
	if err != nil {
		return "", false, err
	}
	if n.holder(s, rel, "") != nil {
		return "", false, nil
	}
	v1, err := n.v1Holder(ctx, s, rel)
	return rel, !v1 && err == nil, err
}

// locationUser names what holds loc in the newest manifest, "" if nothing does.
func (n *Namespace) locationUser(ctx context.Context, loc string) (string, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return "", err
	}
	if r := n.holder(s, loc, ""); r != nil {
		return "table " + SplitID(r.ObjectID).Join(ident.DefaultDelimiter), nil
	}
	v1, err := n.v1Holder(ctx, s, loc)
	if err != nil || !v1 {
		return "", err
	}
	first, _, _ := strings.Cut(loc, "/")
	return "the root table " + strings.TrimSuffix(first, ".lance"), nil
}
