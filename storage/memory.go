package storage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Memory is an in-process Bucket for unit tests. It implements the same
// contract as the durable backends (it runs the same conformance suite), so
// code tested against it behaves the same on disk and S3.
type Memory struct {
	mu   sync.RWMutex
	objs map[string]memObject
	keys []string // sorted, so List need not sort per call
}

type memObject struct {
	data []byte // never mutated after Put; readers share it
	info ObjectInfo
}

var _ Bucket = (*Memory)(nil)

// NewMemory returns an empty in-memory bucket.
func NewMemory() *Memory {
	return &Memory{objs: make(map[string]memObject)}
}

func (m *Memory) lookup(ctx context.Context, key string) (memObject, error) {
	if err := ctx.Err(); err != nil {
		return memObject{}, err
	}
	if err := ValidateKey(key); err != nil {
		return memObject{}, err
	}
	m.mu.RLock()
	obj, ok := m.objs[key]
	m.mu.RUnlock()
	if !ok {
		return memObject{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return obj, nil
}

func (m *Memory) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	obj, err := m.lookup(ctx, key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	return io.NopCloser(bytes.NewReader(obj.data)), obj.info, nil
}

func (m *Memory) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	obj, err := m.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	n, err := rangeLen(key, obj.info.Size, offset, length)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(obj.data[offset : offset+n])), nil
}

func (m *Memory) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	obj, err := m.lookup(ctx, key)
	return obj.info, err
}

func (m *Memory) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	return m.put(ctx, key, r, size, func(memObject, bool) error { return nil })
}

func (m *Memory) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	return m.put(ctx, key, r, size, func(_ memObject, exists bool) error {
		if exists {
			return fmt.Errorf("%w: %q", ErrExists, key)
		}
		return nil
	})
}

func (m *Memory) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	if err := checkIfMatchETag(key, etag); err != nil {
		return ObjectInfo{}, err
	}
	return m.put(ctx, key, r, size, func(cur memObject, exists bool) error {
		if !exists {
			return fmt.Errorf("%w: %q does not exist", ErrPreconditionFailed, key)
		}
		if cur.info.ETag != etag {
			return fmt.Errorf("%w: %q has ETag %q, not %q", ErrPreconditionFailed, key, cur.info.ETag, etag)
		}
		return nil
	})
}

// put buffers the body outside the lock, then runs check and swaps the
// object in under the lock, so conditional writes are atomic.
func (m *Memory) put(ctx context.Context, key string, r io.Reader, size int64, check func(memObject, bool) error) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	var buf bytes.Buffer
	h := newContentHash()
	if _, err := copyBody(ctx, io.MultiWriter(&buf, h), r, size); err != nil {
		return ObjectInfo{}, fmt.Errorf("storage: put %q: %w", key, err)
	}
	data := slices.Clip(buf.Bytes())
	info := ObjectInfo{Key: key, Size: int64(len(data)), ETag: h.ETag(), ModTime: time.Now()}

	m.mu.Lock()
	defer m.mu.Unlock()
	cur, exists := m.objs[key]
	if err := check(cur, exists); err != nil {
		return ObjectInfo{}, err
	}
	if !exists {
		i, _ := slices.BinarySearch(m.keys, key)
		m.keys = slices.Insert(m.keys, i, key)
	}
	m.objs[key] = memObject{data: data, info: info}
	return info, nil
}

func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; !ok {
		return nil
	}
	delete(m.objs, key)
	i, _ := slices.BinarySearch(m.keys, key)
	m.keys = slices.Delete(m.keys, i, i+1)
	return nil
}

func (m *Memory) List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error) {
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	if err := validatePrefix(prefix); err != nil {
		return ListPage{}, err
	}
	p := newPager(prefix, opts)
	m.mu.RLock()
	defer m.mu.RUnlock()
	start := max(prefix, opts.StartAfter)
	for _, key := range m.keys[sort.SearchStrings(m.keys, start):] {
		if !strings.HasPrefix(key, prefix) || !p.add(m.objs[key].info) {
			break
		}
	}
	return p.page, nil
}
