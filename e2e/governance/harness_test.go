// Package governancee2e drives the governance layer end to end: the real `lancecat serve` binary as
// a subprocess, a real OpenFGA and a real MinIO, spoken to only through HTTP with the generated
// clients (client/controlclient, client/nsclient). It skips without those services unless
// LANCECAT_REQUIRE_SERVICES=1 (internal/testenv).
package governancee2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
)

// ---------------------------------------------------------------------------------------------
// The binary: built once per test process, from the module root.

var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
	// logDir keeps the logs of servers whose test failed (t.TempDir would delete them).
	logDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lancecat-governance-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "governance e2e:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds ./cmd/lancecat once (the first test that needs it pays) and answers its path.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		out := filepath.Join(binDir, "lancecat")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/lancecat")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/lancecat: %v\n%s", err, b)
			return
		}
		binPath = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside the lancecat module")
	}
	return filepath.Dir(gomod), nil
}

// childEnv is the test's environment without lancecat's own settings, so only the flags we pass
// configure the subprocess.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LANCECAT_") && !strings.HasPrefix(kv, "LANCECAT_TEST_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ---------------------------------------------------------------------------------------------
// The estate: one catalog root and control root on a fresh MinIO bucket, one fresh OpenFGA store.
// Several servers may run on it (the read-only replica, a server rooted elsewhere).

type estate struct {
	tag        string // random suffix of every warehouse id (and so of every bucket they create)
	s3         testenv.S3Env
	fga        string
	store      string // OpenFGA store name, fresh per estate
	rootBucket string
	root       string // s3://<rootBucket>/catalog
	control    string // s3://<rootBucket>/control, shared by every server of the estate
	minio      *minio.Client
}

func newEstate(t *testing.T) *estate {
	t.Helper()
	s3 := testenv.S3(t)
	fga := testenv.OpenFGA(t)
	binary(t) // build before anything else can fail slowly
	mc, err := minio.New(s3.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""),
		Region: s3.Region,
	})
	assert.NilError(t, err)
	e := &estate{tag: randHex(3), s3: s3, fga: fga, store: "lancecat-gov-e2e-" + randHex(6), minio: mc}
	// Registered before any server starts, so it runs after every server stopped: the buckets
	// warehouses created (all named …-<tag>) go with the test.
	t.Cleanup(func() { e.removeWarehouseBuckets(t) })
	_, e.rootBucket = testenv.S3Bucket(t)
	e.root = "s3://" + e.rootBucket + "/catalog"
	e.control = "s3://" + e.rootBucket + "/control"
	return e
}

// id is a warehouse (or project) id unique to this estate; as a bucket name it is valid S3.
func (e *estate) id(prefix string) string { return prefix + "-" + e.tag }

func (e *estate) removeWarehouseBuckets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	buckets, err := e.minio.ListBuckets(ctx)
	if err != nil {
		t.Logf("listing buckets for cleanup: %v", err)
		return
	}
	for _, b := range buckets {
		if !strings.HasSuffix(b.Name, "-"+e.tag) {
			continue
		}
		objs := e.minio.ListObjects(ctx, b.Name, minio.ListObjectsOptions{Recursive: true})
		for rerr := range e.minio.RemoveObjects(ctx, b.Name, objs, minio.RemoveObjectsOptions{}) {
			t.Logf("cleaning bucket %s: %v", b.Name, rerr.Err)
		}
		if err := e.minio.RemoveBucket(ctx, b.Name); err != nil {
			t.Logf("removing bucket %s: %v", b.Name, err)
		}
	}
}

// rootFlags are the root flags of `lancecat serve` and `lancecat apikey` for a catalog at root.
func (e *estate) rootFlags(root string) []string {
	return []string{
		"--root", root, "--control-root", e.control,
		"--s3-endpoint", e.s3.Endpoint, "--s3-region", e.s3.Region,
		"--s3-access-key", e.s3.AccessKey, "--s3-secret-key", e.s3.SecretKey,
		"--s3-path-style=true", "--s3-allow-http=true",
	}
}

// apiKey creates an API key for user:<name> with the binary's admin command.
func (e *estate) apiKey(t *testing.T, name string) string {
	t.Helper()
	args := append([]string{"apikey", "create", "--principal", "user:" + name, "--description", "governance e2e"}, e.rootFlags(e.root)...)
	cmd := exec.Command(binary(t), args...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	assert.NilError(t, err, "lancecat apikey create: %s", stderr.String())
	key := strings.TrimSpace(stdout.String())
	assert.Assert(t, key != "" && !strings.ContainsAny(key, " \n"), "apikey create printed %q", stdout.String())
	return key
}

// bucketKeys lists every object key of bucket under prefix.
func (e *estate) bucketKeys(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range e.minio.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		assert.NilError(t, o.Err, "listing s3://%s/%s", bucket, prefix)
		keys = append(keys, o.Key)
	}
	return keys
}

func (e *estate) bucketExists(t *testing.T, bucket string) bool {
	t.Helper()
	ok, err := e.minio.BucketExists(context.Background(), bucket)
	assert.NilError(t, err)
	return ok
}

// ---------------------------------------------------------------------------------------------
// A running `lancecat serve`.

type server struct {
	url  string
	name string
	log  *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serve starts `lancecat serve` on a free loopback port (--listen 127.0.0.1:0; the bound address
// is read from its "serving" log line) with authorization by the estate's OpenFGA store and
// user:admin as estate admin, the catalog at root plus extra flags. It waits for /readyz and stops
// the process (SIGTERM, then SIGKILL) when t ends; if t failed, the log is kept and its tail shown.
func (e *estate) serve(t *testing.T, name, root string, extra ...string) *server {
	t.Helper()
	args := []string{"serve", "--listen", "127.0.0.1:0", "--log-level", "info",
		"--authz", "openfga", "--openfga-url", e.fga, "--openfga-store", e.store,
		"--openfga-timeout", "20s", "--estate-admins", "user:admin", "--shutdown-timeout", "5s"}
	args = append(args, e.rootFlags(root)...)
	args = append(args, extra...)
	cmd := exec.Command(binary(t), args...)
	cmd.Env = childEnv()
	s := &server{name: name, log: &syncBuffer{}}
	cmd.Stdout = s.log
	stderr, err := cmd.StderrPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())

	addr := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			_, _ = s.log.Write(append(append([]byte{}, line...), '\n'))
			if sent {
				continue
			}
			var rec struct {
				Msg     string `json:"msg"`
				Address string `json:"address"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" && rec.Address != "" {
				addr <- rec.Address
				sent = true
			}
		}
		_, _ = io.Copy(s.log, stderr) // a line longer than the scanner's buffer
		exited <- cmd.Wait()
	}()
	stopped := false
	var exitErr error
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case exitErr = <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				exitErr = <-exited
			}
		}
		if t.Failed() {
			s.dumpLog(t, exitErr)
		}
	})

	select {
	case a := <-addr:
		s.url = "http://" + a
	case exitErr = <-exited:
		stopped = true
		t.Fatalf("lancecat serve (%s) exited before serving: %v", name, exitErr)
	case <-time.After(90 * time.Second):
		t.Fatalf("lancecat serve (%s): no 'serving' log line after 90s", name)
	}
	// Ready: the roots and OpenFGA answer.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lancecat serve (%s): /readyz not 200 after 60s (last error %v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// dumpLog writes the whole log to a file that outlives the test and shows its errors and tail.
func (s *server) dumpLog(t *testing.T, exitErr error) {
	all := s.log.String()
	if logDir == "" {
		logDir, _ = os.MkdirTemp("", "lancecat-governance-e2e-logs-")
	}
	path := filepath.Join(logDir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-"+s.name+".log")
	_ = os.WriteFile(path, []byte(all), 0o644)
	lines := strings.Split(strings.TrimRight(all, "\n"), "\n")
	var errs []string
	for _, l := range lines {
		if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
			errs = append(errs, l)
		}
	}
	tail := lines[max(0, len(lines)-40):]
	t.Logf("lancecat serve (%s) exited with %v; full log (%d lines): %s\nWARN/ERROR lines:\n%s\nlast %d lines:\n%s",
		s.name, exitErr, len(lines), path, strings.Join(errs, "\n"), len(tail), strings.Join(tail, "\n"))
}

var httpClient = &http.Client{Timeout: 90 * time.Second}

// headers sets the caller's API key ("" = no identity) and a fixed request id, so two answers can
// be compared byte for byte.
func headers(apiKey string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-Request-Id", "governance-e2e")
		if apiKey != "" {
			r.Header.Set("x-api-key", apiKey)
		}
		return nil
	}
}

// control is a control-plane client acting as the holder of apiKey.
func (s *server) control(t *testing.T, apiKey string) *controlclient.ClientWithResponses {
	t.Helper()
	c, err := controlclient.NewClientWithResponses(s.url, controlclient.WithHTTPClient(httpClient),
		controlclient.WithRequestEditorFn(headers(apiKey)))
	assert.NilError(t, err)
	return c
}

// spec is a Lance Namespace spec client acting as the holder of apiKey.
func (s *server) spec(t *testing.T, apiKey string) *nsclient.ClientWithResponses {
	t.Helper()
	c, err := nsclient.NewClientWithResponses(s.url, nsclient.WithHTTPClient(httpClient),
		nsclient.WithRequestEditorFn(headers(apiKey)))
	assert.NilError(t, err)
	return c
}

// caller is one principal's pair of clients.
type caller struct {
	ctl  *controlclient.ClientWithResponses
	spec *nsclient.ClientWithResponses
}

func (s *server) as(t *testing.T, apiKey string) caller {
	return caller{ctl: s.control(t, apiKey), spec: s.spec(t, apiKey)}
}

// ---------------------------------------------------------------------------------------------
// Answers.

// response is what every generated *…Response has.
type response interface {
	StatusCode() int
	GetBody() []byte
}

// expect asserts a call succeeded at the transport, answered wantStatus and, for errors, a
// problem+json body with wantCode; the body contains every string of contains.
func expect(t *testing.T, r response, err error, wantStatus int, wantCode nserr.Code, contains ...string) {
	t.Helper()
	assert.NilError(t, err)
	body := r.GetBody()
	assert.Equal(t, r.StatusCode(), wantStatus, "body: %s", body)
	if wantStatus >= 400 {
		p := problem(t, body)
		assert.Equal(t, p.Code, int(wantCode), "body: %s", body)
		assert.Equal(t, p.Status, wantStatus, "body: %s", body)
	}
	for _, s := range contains {
		assert.Assert(t, strings.Contains(string(body), s), "%q not in %s", s, body)
	}
}

func problem(t *testing.T, body []byte) nserr.Problem {
	t.Helper()
	var p nserr.Problem
	assert.NilError(t, json.Unmarshal(body, &p), "not a problem body: %s", body)
	return p
}

var requestIDField = regexp.MustCompile(`,?"request_id":"[^"]*"`)

// withoutRequestID is body with its request_id field removed, the rest byte for byte.
func withoutRequestID(body []byte) string { return requestIDField.ReplaceAllString(string(body), "") }

func ptr[T any](v T) *T { return &v }

// query adds ?name=value to a request the generated client builds (parameters the spec leaves out,
// such as force on the Lance drop routes).
func query(name, value string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		q := r.URL.Query()
		q.Set(name, value)
		r.URL.RawQuery = q.Encode()
		return nil
	}
}

// ---------------------------------------------------------------------------------------------
// Data.

const arrowStream = "application/vnd.apache.arrow.stream"

// int64Stream is an Arrow IPC stream of one int64 column holding 0..rows-1.
func int64Stream(t *testing.T, rows int) io.Reader {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return &buf
}

// createTable creates table id with rows rows through the spec route and answers its location.
func createTable(t *testing.T, c caller, id string, rows int) string {
	t.Helper()
	ctx := context.Background()
	cr, err := c.spec.CreateTableWithBodyWithResponse(ctx, id, nil, arrowStream, int64Stream(t, rows))
	expect(t, cr, err, 200, 0)
	return describeLocation(t, c, id)
}

// describeLocation is describe_table's location of id.
func describeLocation(t *testing.T, c caller, id string) string {
	t.Helper()
	d, err := c.spec.DescribeTableWithResponse(context.Background(), id, nil, nsclient.DescribeTableRequest{})
	expect(t, d, err, 200, 0)
	assert.Assert(t, d.JSON200 != nil && d.JSON200.Location != nil && *d.JSON200.Location != "", "describe %s: no location: %s", id, d.Body)
	return *d.JSON200.Location
}

// splitS3 splits s3://bucket/key.
func splitS3(t *testing.T, uri string) (bucket, key string) {
	t.Helper()
	u, err := url.Parse(uri)
	assert.NilError(t, err)
	assert.Equal(t, u.Scheme, "s3", "location %s", uri)
	return u.Host, strings.TrimPrefix(u.Path, "/")
}
