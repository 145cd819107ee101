package lance

import (
	"container/list"
	"strconv"
	"sync"
)

// manifestCache holds decoded manifest files, shared by every Dataset of
// the process. Every request of the server opens its table afresh (a new
// Dataset over a new store handle), so without it each count_rows or
// query re-read and re-decoded the same immutable manifest.
//
// Only the decode is cached, never which version is the latest: the
// caller still lists _versions/ (or resolves a tag) on every open and
// looks the file it found up here. The key is what identifies the file's
// bytes — the dataset location, the branch, the key, the size and the
// ETag (a content hash on every store we have: MD5 on S3, a SHA-256 of
// the content on the local store). A manifest rewritten in place, or a
// table dropped and recreated at the same location, has another ETag (or
// the same bytes, and then the same decode), so a hit is never stale, on
// this replica or across replicas. Files without an ETag or datasets
// without a known location are not cached.
//
// The cached *ManifestFile is shared: Version's contract already says its
// protobuf messages are read-only (proto.Clone before building a new
// version), which is what makes sharing them across requests safe.
//
// Bounded by bytes, least recently used first out. The weight is the
// manifest file's size times manifestDecodedFactor, an estimate of the
// decoded messages' heap (Go structs and slices are larger than the wire
// form). A small LRU over container/list rather than a dependency: the
// need is one map and one list, and hashicorp/golang-lru bounds entries,
// not bytes.
type manifestCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front: most recently used; values *manifestEntry
	byKey map[string]*list.Element
}

type manifestEntry struct {
	key    string
	file   *ManifestFile
	weight int64
}

// manifestDecodedFactor: decoded size ≈ 4× the file (measured roughly on
// manifests of a few hundred fragments; only a bound, not accounting).
const manifestDecodedFactor = 4

// manifestCacheBytes is the default budget: 64 MiB of decoded manifests
// (hundreds of typical tables; a manifest of 100,000 fragments is ~10 MB).
const manifestCacheBytes = 64 << 20

var sharedManifests = newManifestCache(manifestCacheBytes)

func newManifestCache(maxBytes int64) *manifestCache {
	return &manifestCache{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

// manifestCacheKey identifies a manifest file's bytes; "" means do not
// cache.
func (d *Dataset) manifestCacheKey(loc ManifestLocation) string {
	if d.location == "" || loc.ETag == "" || loc.Size <= 0 || loc.Key == "" {
		return ""
	}
	return d.location + "\x00" + d.branch + "\x00" + loc.Key + "\x00" + strconv.FormatInt(loc.Size, 10) + "\x00" + loc.ETag
}

func (c *manifestCache) get(key string) *ManifestFile {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*manifestEntry).file
}

func (c *manifestCache) put(key string, f *ManifestFile, fileSize int64) {
	weight := fileSize * manifestDecodedFactor
	if key == "" || weight > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&manifestEntry{key: key, file: f, weight: weight})
	c.used += weight
	for c.used > c.max {
		el := c.order.Back()
		e := el.Value.(*manifestEntry)
		c.order.Remove(el)
		delete(c.byKey, e.key)
		c.used -= e.weight
	}
}

// len and bytes are for tests.
func (c *manifestCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
