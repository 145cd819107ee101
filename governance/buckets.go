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
// runs on a local disk.
type Buckets interface {
	// Resolve checks a requested bucket ("" means: derive it from the warehouse id) and returns its
	// canonical name and the root URI its namespaces live under.
	Resolve(warehouseID, bucket string) (name, rootURI string, err error)
	// Reserved reports why bucket may not be a warehouse ("" if it may): the catalog root and the
	// control root are the server's own.
	Reserved(name string) string
	// Shared reports whether two canonical buckets hold any object in common.
	Shared(a, b string) bool
	// Ensure makes the bucket exist; an existing one is fine.
	Ensure(ctx context.Context, name string) error
	// Purge deletes every object in the bucket (and the bucket, where the backend has one) and
	// returns how many objects it deleted. A bucket already gone purges 0.
	Purge(ctx context.Context, name string) (int64, error)
}

// LocalBuckets keeps warehouses in directories. A requested bucket must be an absolute directory;
// an empty one is Base/<warehouse id>.
type LocalBuckets struct {
	Base    string   // where warehouses without an explicit directory go
	Reserve []string // the catalog root and control root directories
}

func (l LocalBuckets) Resolve(warehouseID, bucket string) (string, string, error) {
	if bucket == "" {
		if l.Base == "" {
			return "", "", nserr.InvalidInputf("bucket is required: this server has no default warehouse directory")
		}
		bucket = filepath.Join(l.Base, warehouseID)
	}
	if !filepath.IsAbs(bucket) {
		return "", "", nserr.InvalidInputf("bucket %q must be an absolute directory on this server (it keeps warehouses on local disk)", bucket)
	}
	clean := filepath.Clean(bucket)
	if clean == "/" {
		return "", "", nserr.InvalidInputf("bucket %q cannot be the file system root", bucket)
	}
	return clean, clean, nil
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

func (l LocalBuckets) Ensure(_ context.Context, name string) error {
	if err := os.MkdirAll(name, 0o755); err != nil {
		return nserr.Wrap(nserr.ServiceUnavailable, err, "creating the warehouse directory failed")
	}
	return nil
}

func (l LocalBuckets) Purge(ctx context.Context, name string) (int64, error) {
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	b, err := storage.NewFS(name)
	if err != nil {
		return 0, nserr.Wrap(nserr.ServiceUnavailable, err, "opening the warehouse directory failed")
	}
	n, err := purgeObjects(ctx, b)
	if err != nil {
		return n, err
	}
	// Objects are gone; the empty directory tree goes with them.
	if err := os.RemoveAll(name); err != nil {
		return n, nserr.Wrap(nserr.ServiceUnavailable, err, "removing the warehouse directory failed")
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
			return n, nserr.Wrap(nserr.ServiceUnavailable, err, "listing the bucket to purge failed")
		}
		if len(page.Objects) == 0 {
			return n, nil
		}
		for _, o := range page.Objects {
			if err := b.Delete(ctx, o.Key); err != nil {
				return n, nserr.Wrap(nserr.ServiceUnavailable, err, "deleting an object of the purged bucket failed")
			}
			n++
		}
	}
}
