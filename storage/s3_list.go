package storage

import (
	"context"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
)

// List makes one ListObjectsV2 request and stops pulling from minio-go's
// lazy iterator at the end of that response, so nothing beyond one
// response is buffered and no second request is made.
//
// minio-go yields a response's objects first and then its common prefixes,
// so entries are re-sorted here. Counting pulled entries to find the end
// of the response relies on the server filling truncated responses to
// max-keys, which AWS S3 and MinIO do.
func (s *S3) List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error) {
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	if err := validatePrefix(prefix); err != nil {
		return ListPage{}, err
	}
	limit := opts.Limit
	if limit <= 0 || limit > MaxListLimit {
		limit = MaxListLimit
	}
	maxKeys := limit
	if opts.Delimiter && opts.StartAfter != "" {
		// The server may return the common prefix equal to StartAfter
		// (start-after compares against keys, and "a/b/x" > "a/b/"); it is
		// dropped below, so ask for one spare entry to still fill the page.
		maxKeys = min(limit+1, MaxListLimit)
		limit = min(limit, maxKeys-1)
	}

	lo := minio.ListObjectsOptions{
		Prefix:     s.prefix + prefix,
		Recursive:  !opts.Delimiter,
		MaxKeys:    maxKeys,
		FetchOwner: new(false),
	}
	if opts.StartAfter != "" {
		lo.StartAfter = s.prefix + opts.StartAfter
	}

	type entry struct {
		name string
		obj  *ObjectInfo
	}
	var entries []entry
	pulled, lastPulled := 0, ""
	for oi := range s.client.ListObjectsIter(ctx, s.bucket, lo) {
		if oi.Err != nil {
			return ListPage{}, s.opErr("list", prefix, oi.Err)
		}
		pulled++
		rel := strings.TrimPrefix(oi.Key, s.prefix)
		lastPulled = max(lastPulled, rel)
		switch {
		case rel <= opts.StartAfter || !strings.HasPrefix(rel, prefix):
		case opts.Delimiter && strings.HasSuffix(rel, "/") && rel != prefix:
			if validatePrefix(rel) == nil {
				entries = append(entries, entry{name: rel})
			}
		case ValidateKey(rel) == nil:
			// Objects written by other tools with keys we could not
			// address (e.g. "dir/" markers) are not listed.
			info := s3Info(rel, oi)
			entries = append(entries, entry{name: rel, obj: &info})
		}
		// Stop at the end of the first response: pulling one more entry
		// would make minio-go request the next page.
		if pulled == maxKeys {
			break
		}
	}

	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	// A full response may have been truncated; we cannot tell without a
	// look-ahead request, so the next call may come back empty and done.
	more := pulled == maxKeys || len(entries) > limit
	entries = entries[:min(len(entries), limit)]
	var page ListPage
	for _, e := range entries {
		if e.obj != nil {
			page.Objects = append(page.Objects, *e.obj)
		} else {
			page.CommonPrefixes = append(page.CommonPrefixes, e.name)
		}
	}
	switch {
	case more && len(entries) > 0:
		page.NextStartAfter = entries[len(entries)-1].name
	case more && lastPulled > opts.StartAfter:
		// Everything pulled was unlistable; resume past it.
		page.NextStartAfter = lastPulled
	}
	return page, nil
}
