package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
)

// catalog is a real `lancecat serve` (app.Run, the same path as the command) on a loopback
// port, with a local root, recoverable drops and warehouses under a directory of their own.
type catalog struct {
	url string
	cfg app.Config
}

func serve(t *testing.T, edit func(*app.Config)) *catalog {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Root = t.TempDir()
	cfg.Governance.WarehouseRoot = t.TempDir()
	cfg.Governance.TrashGraceDays = 7
	cfg.LogLevel = "warn"
	if edit != nil {
		edit(&cfg)
	}
	ready := make(chan net.Addr, 1)
	base := testenv.Serve(t, ready, func(ctx context.Context) error {
		// A cancelled server may answer with the cancellation itself: that is how it stops here.
		if err := app.Run(ctx, cfg, nil, ready); !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	})
	return &catalog{url: base, cfg: cfg}
}

// apiKey mints a key for principal on the catalog's control root (what `lancecat apikey create` does).
func (c *catalog) apiKey(t *testing.T, principal string) string {
	t.Helper()
	ctx := context.Background()
	bucket, _, err := app.OpenControlRoot(ctx, c.cfg)
	assert.NilError(t, err)
	p, err := authz.ParsePrincipal(principal)
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(bucket)).Create(ctx, p, "console test")
	assert.NilError(t, err)
	return key
}

// do calls a door as a client would (the seeding side of the tests), failing on a non-2xx.
func (c *catalog) do(t *testing.T, key, method, path, contentType string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	assert.NilError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	assert.Assert(t, res.StatusCode/100 == 2, "%s %s: %d %s", method, path, res.StatusCode, b)
	return b
}

func (c *catalog) post(t *testing.T, key, path string, body any) []byte {
	t.Helper()
	b, err := json.Marshal(body)
	assert.NilError(t, err)
	return c.do(t, key, http.MethodPost, path, "application/json", b)
}

// seed builds the estate the tests browse: project analytics, warehouse lake, namespace sales
// bound to it, and table sales$items with five rows.
func (c *catalog) seed(t *testing.T, key string) {
	t.Helper()
	c.post(t, key, "/v1/projects", map[string]any{"id": "analytics"})
	c.post(t, key, "/v1/warehouses", map[string]any{"id": "lake", "project": "analytics"})
	c.post(t, key, "/v1/warehouses/lake/namespaces", map[string]any{"namespace": "sales"})
	c.do(t, key, http.MethodPost, "/v1/table/sales$items/create", "application/vnd.apache.arrow.stream", itemsArrow(t))
}

func itemsArrow(t *testing.T) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3, 4, 5}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"apple", "pear", "plum", "fig", "kiwi"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// client is a cookie-keeping HTTP client that does not follow redirects (the tests look at them).
func client(t *testing.T) *http.Client {
	t.Helper()
	jar := &jar{cookies: map[string]*http.Cookie{}}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// jar keeps cookies by name regardless of path (one host, the console's path).
type jar struct{ cookies map[string]*http.Cookie }

func (j *jar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	for _, c := range cs {
		if c.MaxAge < 0 {
			delete(j.cookies, c.Name)
			continue
		}
		j.cookies[c.Name] = c
	}
}

func (j *jar) Cookies(*url.URL) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range j.cookies {
		out = append(out, c)
	}
	return out
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	assert.NilError(t, err)
	return string(b)
}

// between is the text between two markers (the CSRF token out of a form, say).
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return ""
}
