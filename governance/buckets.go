package governance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

// Buckets is where warehouses live: S3 buckets when the catalog runs on S3, directories when it
// runs on a local disk. A warehouse's bucket is one the catalog made for it (Ensure refuses one
// that was already there), so a purge deletes only what was written through the warehouse.
type Buckets interface {
	// Resolve checks a requested bucket ("" means: derive it from the warehouse id) and returns its
	// canonical name and the root URI its namespaces live under.
	Resolve(warehouseID, bucket string) (name, rootURI string, err error)
	// Reserved reports why bucket may not be a warehouse ("" if it may): the catalog root and the
	// control root are the server's own. The reason names server paths: it is for the log only.
	Reserved(name string) string
	// Shared reports whether two canonical buckets hold any object in common.
	Shared(a, b string) bool
	// Ensure makes the bucket and reports whether this call made it. A bucket that already exists
	// is refused (errBucketUnavailable) unless it is empty; made is then false.
	Ensure(ctx context.Context, name string) (made bool, err error)
	// Release removes a bucket Ensure made, if it is still empty: the undo of a failed create. A
	// bucket that holds anything, or is gone, is left as it is.
	Release(ctx context.Context, name string) error
	// Purge deletes every object in the bucket (and the bucket, where the backend has one) and
	// returns how many objects it deleted. A bucket already gone purges 0.
	Purge(ctx context.Context, name string) (int64, error)
}

// errBucketUnavailable is the answer to a bucket that cannot become a warehouse: already there
// (made by someone else, or claimed), taken by another account. It says nothing of who holds it.
func errBucketUnavailable(bucket string) error {
	return nserr.NamespaceAlreadyExistsf("bucket %q is not available for a new warehouse: choose another", bucket)
}

// localBucketRE is a warehouse directory name on a local root: one path element, never "." or
// "..", no separator (the same shape as an S3 bucket name, so a name moves between backends).
var localBucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// LocalBuckets keeps warehouses in directories directly under Base (--warehouse-root). A
// requested bucket is a name, never a path; an empty one is the warehouse id.
type LocalBuckets struct {
	Base    string   // the directory every warehouse directory lives in
	Reserve []string // the catalog root and control root directories
}

func (l LocalBuckets) Resolve(warehouseID, bucket string) (string, string, error) {
	if l.Base == "" {
		return "", "", nserr.Unsupportedf("this server has no warehouse directory configured")
	}
	if bucket == "" {
		bucket = warehouseID
	}
	if !localBucketRE.MatchString(bucket) {
		return "", "", nserr.InvalidInputf("bucket %q must be a name (1–63 of a-z, 0-9, '.', '-', '_', starting with a letter or digit), not a path: this server keeps each warehouse in a directory of that name under its warehouse root", bucket)
	}
	dir := filepath.Join(l.Base, bucket)
	return dir, dir, nil
}

// inBase reports whether name is a directory directly under Base: the only kind a warehouse of
// this server is made in and the only kind it ever purges (records from before warehouses were
// names may point anywhere).
func (l LocalBuckets) inBase(name string) bool {
	return l.Base != "" && filepath.IsAbs(name) && filepath.Clean(name) == name &&
		filepath.Dir(name) == filepath.Clean(l.Base) && localBucketRE.MatchString(filepath.Base(name))
}

func (l LocalBuckets) Reserved(name string) string {
	for _, r := range l.Reserve {
		if l.Shared(name, r) {
			return fmt.Sprintf("directory %s overlaps %s, which the catalog itself uses", name, filepath.Clean(r))
		}
	}
	return ""
}

// Shared: one directory holds the other.
func (LocalBuckets) Shared(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	return a == b || strings.HasPrefix(a, b+string(filepath.Separator)) || strings.HasPrefix(b, a+string(filepath.Separator))
}

// Ensure makes the directory. What already exists at that name is adopted only if it is an
// empty directory (a leftover of a create that failed); anything else (a directory holding
// files, a file, a symbolic link) is not the warehouse's to adopt, so it is refused.
func (l LocalBuckets) Ensure(_ context.Context, name string) (bool, error) {
	if !l.inBase(name) {
		return false, nserr.InvalidInputf("warehouse directories are made only under the warehouse root")
	}
	if err := os.MkdirAll(l.Base, 0o755); err != nil {
		return false, nserr.ServiceUnavailablef("creating the warehouse root failed: %w", err)
	}
	err := os.Mkdir(name, 0o755)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return false, nserr.ServiceUnavailablef("creating the warehouse directory failed: %w", err)
	}
	fi, err := os.Lstat(name)
	if err != nil {
		return false, nserr.ServiceUnavailablef("reading the existing warehouse directory failed: %w", err)
	}
	if !fi.IsDir() {
		return false, errBucketUnavailable(filepath.Base(name))
	}
	entries, err := os.ReadDir(name)
	if err != nil {
		return false, nserr.ServiceUnavailablef("reading the existing warehouse directory failed: %w", err)
	}
	if len(entries) > 0 {
		return false, errBucketUnavailable(filepath.Base(name))
	}
	return false, nil
}

// Release removes the directory if it is empty (os.Remove refuses a directory that is not).
func (l LocalBuckets) Release(_ context.Context, name string) error {
	if !l.inBase(name) {
		return nil
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the warehouse directory %s: %w", name, err)
	}
	return nil
}

// Purge deletes the directory's objects, then the directory. Only a directory directly under
// the warehouse root is ever purged.
func (l LocalBuckets) Purge(ctx context.Context, name string) (int64, error) {
	if !l.inBase(name) {
		return 0, nserr.InvalidInputf("this warehouse's directory is not one this server made under its warehouse root: it is never purged; delete without purge_bucket")
	}
	fi, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, nserr.ServiceUnavailablef("reading the warehouse directory failed: %w", err)
	}
	if !fi.IsDir() {
		return 0, nserr.InvalidInputf("this warehouse's directory was replaced by something else: it is never purged; delete without purge_bucket")
	}
	b, err := storage.NewFS(name)
	if err != nil {
		return 0, nserr.ServiceUnavailablef("opening the warehouse directory failed: %w", err)
	}
	n, err := purgeObjects(ctx, b)
	if err != nil {
		return n, err
	}
	// Objects are gone; the empty directory tree goes with them.
	if err := os.RemoveAll(name); err != nil {
		return n, nserr.ServiceUnavailablef("removing the warehouse directory failed: %w", err)
	}
	return n, nil
}

// S3Buckets keeps warehouses in S3 buckets of one endpoint. Reserve holds the bucket names of the
// catalog root and the control root.
type S3Buckets struct {
	Config  storage.S3Config
	Reserve []string
}

// s3BucketRE is S3's bucket naming rule (lowercase, 3–63, no leading/trailing dot or dash).
var s3BucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func (b S3Buckets) Resolve(warehouseID, bucket string) (string, string, error) {
	if bucket == "" {
		bucket = warehouseID
	}
	bucket = strings.TrimPrefix(bucket, "s3://")
	if !s3BucketRE.MatchString(bucket) || strings.Contains(bucket, "..") {
		return "", "", nserr.InvalidInputf("bucket %q is not a valid S3 bucket name (3–63 of a-z, 0-9, '.', '-')", bucket)
	}
	return bucket, "s3://" + bucket, nil
}

func (b S3Buckets) Reserved(name string) string {
	for _, r := range b.Reserve {
		if r == name {
			return fmt.Sprintf("bucket %s is the catalog's own", name)
		}
	}
	return ""
}

func (S3Buckets) Shared(a, b string) bool { return a == b }

// purgeObjects deletes every object of b, page by page.
func purgeObjects(ctx context.Context, b storage.Bucket) (int64, error) {
	var n int64
	for {
		// Always list from the start: what was deleted is gone, so this pages through any number
		// of objects and also catches objects written while we work.
		page, err := b.List(ctx, "", storage.ListOptions{Limit: storage.MaxListLimit})
		if err != nil {
			return n, nserr.ServiceUnavailablef("listing the bucket to purge failed: %w", err)
		}
		if len(page.Objects) == 0 {
			return n, nil
		}
		for _, o := range page.Objects {
			if err := b.Delete(ctx, o.Key); err != nil {
				return n, nserr.ServiceUnavailablef("deleting an object of the purged bucket failed: %w", err)
			}
			n++
		}
	}
}
