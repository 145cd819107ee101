package storagetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

// listLayout has keys whose characters sort before and after "/" next to a
// "directory" of the same name, the case a naive directory walk gets wrong.
var listLayout = []string{
	"a!", "a-b", "a.txt", "a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1", "a0", "b/1", "c",
}

func putLayout(t *testing.T, b storage.Bucket) {
	// Written in reverse so no backend can pass by keeping insertion order.
	for _, k := range slices.Backward(listLayout) {
		put(t, b, k, "v:"+k)
	}
}

// listAllPages pages through List with opts and returns the concatenated
// entries, checking the per-page invariants on the way.
func listAllPages(t *testing.T, b storage.Bucket, prefix string, opts storage.ListOptions) (objs, cps []string) {
	t.Helper()
	limit := opts.Limit
	if limit <= 0 {
		limit = storage.MaxListLimit
	}
	for pages := 0; ; pages++ {
		assert.Assert(t, pages < 10_000, "List does not terminate")
		page, err := b.List(t.Context(), prefix, opts)
		assert.NilError(t, err, "List %q %+v", prefix, opts)
		n := len(page.Objects) + len(page.CommonPrefixes)
		assert.Check(t, n <= limit, "page of %d entries exceeds limit %d", n, limit)
		objs = append(objs, keysOf(page.Objects)...)
		cps = append(cps, page.CommonPrefixes...)
		if page.NextStartAfter == "" {
			return objs, cps
		}
		assert.Assert(t, page.NextStartAfter > opts.StartAfter, "NextStartAfter %q does not advance", page.NextStartAfter)
		opts.StartAfter = page.NextStartAfter
	}
}

func testListPrefix(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	putLayout(t, b)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", listLayout},
		{"a/", []string{"a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1"}},
		{"a", []string{"a!", "a-b", "a.txt", "a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1", "a0"}},
		{"a/b", []string{"a/b/1", "a/b/2"}},
		{"a/b/", []string{"a/b/1", "a/b/2"}},
		{"a/c/d/1", []string{"a/c/d/1"}},
		{"a/c/", []string{"a/c/d/1"}},
		{"b", []string{"b/1"}},
		{"c", []string{"c"}},
		{"c/", nil},
		{"zzz", nil},
		{"a/zzz/", nil},
	} {
		page, err := b.List(ctx, tc.prefix, storage.ListOptions{})
		assert.NilError(t, err, tc.prefix)
		assert.Check(t, is.DeepEqual(orEmpty(keysOf(page.Objects)), orEmpty(tc.want)), "prefix %q", tc.prefix)
		assert.Check(t, is.Len(page.CommonPrefixes, 0), "prefix %q", tc.prefix)
		assert.Check(t, is.Equal(page.NextStartAfter, ""), "prefix %q", tc.prefix)
	}

	// Listed metadata agrees with Stat.
	page, err := b.List(ctx, "a/b/", storage.ListOptions{})
	assert.NilError(t, err)
	for _, o := range page.Objects {
		st, err := b.Stat(ctx, o.Key)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(o.Size, st.Size), o.Key)
		assert.Check(t, is.Equal(o.ETag, st.ETag), o.Key)
		assert.Check(t, !o.ModTime.IsZero(), o.Key)
	}
}

func testListDelimiter(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	putLayout(t, b)
	for _, tc := range []struct {
		prefix string
		objs   []string
		cps    []string
	}{
		{"", []string{"a!", "a-b", "a.txt", "a0", "c"}, []string{"a/", "b/"}},
		{"a/", []string{"a/1", "a/2"}, []string{"a/b/", "a/c/"}},
		{"a", []string{"a!", "a-b", "a.txt", "a0"}, []string{"a/"}},
		{"a/c/", nil, []string{"a/c/d/"}},
		{"a/c", nil, []string{"a/c/"}},
		{"a/c/d/", []string{"a/c/d/1"}, nil},
		{"zzz/", nil, nil},
	} {
		page, err := b.List(ctx, tc.prefix, storage.ListOptions{Delimiter: true})
		assert.NilError(t, err, tc.prefix)
		assert.Check(t, is.DeepEqual(orEmpty(keysOf(page.Objects)), orEmpty(tc.objs)), "prefix %q objects", tc.prefix)
		assert.Check(t, is.DeepEqual(orEmpty(page.CommonPrefixes), orEmpty(tc.cps)), "prefix %q prefixes", tc.prefix)
		assert.Check(t, is.Equal(page.NextStartAfter, ""), "prefix %q", tc.prefix)
	}
}

func testListStartAfter(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	putLayout(t, b)
	for _, tc := range []struct {
		prefix, after string
		delim         bool
		objs, cps     []string
	}{
		{prefix: "", after: "a/2", objs: []string{"a/b/1", "a/b/2", "a/c/d/1", "a0", "b/1", "c"}},
		{prefix: "", after: "a/", objs: []string{"a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1", "a0", "b/1", "c"}},
		{prefix: "", after: "a/b/1", objs: []string{"a/b/2", "a/c/d/1", "a0", "b/1", "c"}},
		{prefix: "", after: "a/b/3", objs: []string{"a/c/d/1", "a0", "b/1", "c"}},
		{prefix: "", after: "a", objs: []string{"a!", "a-b", "a.txt", "a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1", "a0", "b/1", "c"}},
		{prefix: "", after: "c", objs: nil},
		{prefix: "", after: "zzz", objs: nil},
		{prefix: "a/", after: "0", objs: []string{"a/1", "a/2", "a/b/1", "a/b/2", "a/c/d/1"}},
		{prefix: "a/", after: "a/2", objs: []string{"a/b/1", "a/b/2", "a/c/d/1"}},
		{prefix: "a/", after: "b", objs: nil},
		// A common prefix is an entry positioned at its own name: it is
		// returned iff it sorts after StartAfter.
		{prefix: "", after: "a.txt", delim: true, objs: []string{"a0", "c"}, cps: []string{"a/", "b/"}},
		{prefix: "", after: "a/", delim: true, objs: []string{"a0", "c"}, cps: []string{"b/"}},
		{prefix: "", after: "a/1", delim: true, objs: []string{"a0", "c"}, cps: []string{"b/"}},
		{prefix: "a/", after: "a/1", delim: true, objs: []string{"a/2"}, cps: []string{"a/b/", "a/c/"}},
		{prefix: "a/", after: "a/b/", delim: true, cps: []string{"a/c/"}},
		{prefix: "a/", after: "a/b/1", delim: true, cps: []string{"a/c/"}},
	} {
		page, err := b.List(ctx, tc.prefix, storage.ListOptions{StartAfter: tc.after, Delimiter: tc.delim})
		assert.NilError(t, err)
		msg := fmt.Sprintf("prefix %q after %q delim %v", tc.prefix, tc.after, tc.delim)
		assert.Check(t, is.DeepEqual(orEmpty(keysOf(page.Objects)), orEmpty(tc.objs)), msg)
		assert.Check(t, is.DeepEqual(orEmpty(page.CommonPrefixes), orEmpty(tc.cps)), msg)
	}
}

// testListPaging: every page size yields the same entries as one big page.
func testListPaging(t *testing.T, b storage.Bucket) {
	putLayout(t, b)
	for _, delim := range []bool{false, true} {
		for _, prefix := range []string{"", "a", "a/"} {
			wantObjs, wantCPs := listAllPages(t, b, prefix, storage.ListOptions{Delimiter: delim})
			for limit := 1; limit <= 4; limit++ {
				objs, cps := listAllPages(t, b, prefix, storage.ListOptions{Delimiter: delim, Limit: limit})
				msg := fmt.Sprintf("prefix %q delim %v limit %d", prefix, delim, limit)
				assert.Check(t, is.DeepEqual(orEmpty(objs), orEmpty(wantObjs)), msg)
				assert.Check(t, is.DeepEqual(orEmpty(cps), orEmpty(wantCPs)), msg)
			}
		}
	}
}

func testListAfterDelete(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	putLayout(t, b)
	for _, k := range []string{"a/c/d/1", "a/b/1", "b/1"} {
		assert.NilError(t, b.Delete(ctx, k))
	}
	objs, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(keysOf(objs), []string{"a!", "a-b", "a.txt", "a/1", "a/2", "a/b/2", "a0", "c"}))
	// A "directory" whose last key is gone is no longer a common prefix.
	page, err := b.List(ctx, "a/", storage.ListOptions{Delimiter: true})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(page.CommonPrefixes, []string{"a/b/"}))
	page, err = b.List(ctx, "", storage.ListOptions{Delimiter: true})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(page.CommonPrefixes, []string{"a/"}))
	// The key space can be reused after the prune.
	put(t, b, "a/c/d/1", "again")
	got, _ := read(t, b, "a/c/d/1")
	assert.Check(t, is.Equal(got, "again"))
}

// testListManyKeys crosses S3's 1000-key page size.
func testListManyKeys(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const n = 1100
	var want []string
	for i := range n {
		// Two levels so delimiter listings page over prefixes as well.
		want = append(want, fmt.Sprintf("many/d%02d/k%04d", i%12, i))
	}
	slices.Sort(want)
	var wg sync.WaitGroup
	keys := make(chan string)
	for range 32 {
		wg.Go(func() {
			for k := range keys {
				_, err := b.Put(ctx, k, strings.NewReader(""), 0)
				assert.Check(t, err, k)
			}
		})
	}
	for _, k := range want {
		keys <- k
	}
	close(keys)
	wg.Wait()

	objs, err := storage.ListAll(ctx, b, "many/")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(keysOf(objs), want))

	page, err := b.List(ctx, "many/", storage.ListOptions{})
	assert.NilError(t, err)
	assert.Check(t, is.Len(page.Objects, storage.MaxListLimit), "default page size")
	assert.Check(t, page.NextStartAfter != "", "first page must not claim to be the last")
	page, err = b.List(ctx, "many/", storage.ListOptions{Limit: 5000})
	assert.NilError(t, err)
	assert.Check(t, len(page.Objects) <= storage.MaxListLimit, "Limit is capped at MaxListLimit")

	got, _ := listAllPages(t, b, "many/", storage.ListOptions{Limit: 333})
	assert.Check(t, is.DeepEqual(got, want))
	_, cps := listAllPages(t, b, "many/", storage.ListOptions{Delimiter: true, Limit: 5})
	assert.Check(t, is.Len(cps, 12))
}
