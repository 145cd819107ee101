package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// The parts of TestTopologyRollingRestart: processes started and stopped by the test, each
// logging to a file in the test's directory that is printed when the test fails.

type binaries struct{ lancecat, openfga, nginx, postgres, pgLib string }

// topologyBinaries: lancecat built from this tree, OpenFGA from the tools cache, nginx and
// PostgreSQL from Debian's packages (scripts/deploy).
func topologyBinaries(t *testing.T) binaries {
	t.Helper()
	var b binaries
	b.lancecat = filepath.Join(t.TempDir(), "lancecat")
	out, err := exec.Command("go", "build", "-o", b.lancecat, "../cmd/lancecat").CombinedOutput()
	assert.NilError(t, err, "go build: %s", out)
	script := func(path string, args ...string) []string {
		cmd := exec.Command(path, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		assert.NilError(t, err, "%s: %s", path, stderr.String())
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	b.openfga = script("../scripts/tools.sh", "openfga")[0]
	b.nginx = script("../scripts/deploy/nginx.sh")[0]
	pg := script("../scripts/deploy/postgres.sh")
	b.postgres = pg[0]
	if len(pg) > 1 {
		b.pgLib = pg[1]
	}
	return b
}

func newestSDK(t *testing.T) string {
	t.Helper()
	dirs := testenv.SDKs(t)
	sort.Slice(dirs, func(i, j int) bool { return testenv.SDKVersion(dirs[i]) > testenv.SDKVersion(dirs[j]) })
	return dirs[0]
}

func newestVenv(t *testing.T) string {
	t.Helper()
	return pythonVenvs(t)[0] // newest first
}

// child is a child process logging to a file, stopped when the test ends.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startChild(t *testing.T, name, logFile string, cmd *exec.Cmd) *child {
	t.Helper()
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	assert.NilError(t, err)
	cmd.Stdout, cmd.Stderr = f, f
	assert.NilError(t, cmd.Start(), name)
	p := &child{name: name, cmd: cmd, log: logFile, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		if t.Failed() {
			tail, _ := os.ReadFile(logFile)
			if len(tail) > 4000 {
				tail = tail[len(tail)-4000:]
			}
			t.Logf("----- %s log (%s) -----\n%s", name, logFile, tail)
		}
	})
	return p
}

// stop signals the process and waits for it (up to 30 s).
func (p *child) stop(sig syscall.Signal) error {
	select {
	case err := <-p.done:
		return err // already gone
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 30s of %v", p.name, sig)
	}
}

// asNobody runs cmd as the unprivileged user when the test runs as root (PostgreSQL refuses root).
func asNobody(cmd *exec.Cmd) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

type postgres struct {
	port int
	bin  string
}

// startPostgres initialises a cluster in a fresh directory and serves it on a loopback port.
func startPostgres(t *testing.T, bin string) postgres {
	t.Helper()
	dir, err := os.MkdirTemp("", "lancecat-pg-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		assert.NilError(t, os.Chown(dir, 65534, 65534))
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
	asNobody(initdb)
	out, err := initdb.CombinedOutput()
	assert.NilError(t, err, "initdb: %s", out)
	port := freePort(t)
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	asNobody(cmd)
	p := startChild(t, "postgres", filepath.Join(dir, "postgres.log"), cmd)
	t.Cleanup(func() { _ = p.stop(syscall.SIGINT) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe := exec.Command(filepath.Join(bin, "psql"), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres", "-c", "CREATE DATABASE openfga")
		if out, err := probe.CombinedOutput(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("postgres not ready: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return postgres{port: port, bin: bin}
}

// startOpenFGAOnPostgres migrates the database and serves OpenFGA on it; it answers the HTTP URL.
func startOpenFGAOnPostgres(t *testing.T, bin string, pg postgres) string {
	t.Helper()
	uri := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/openfga?sslmode=disable", pg.port)
	out, err := exec.Command(bin, "migrate", "--datastore-engine", "postgres", "--datastore-uri", uri).CombinedOutput()
	assert.NilError(t, err, "openfga migrate: %s", out)
	http, grpc := freePort(t), freePort(t)
	cmd := exec.Command(bin, "run", "--datastore-engine", "postgres", "--datastore-uri", uri,
		"--http-addr", "127.0.0.1:"+strconv.Itoa(http), "--grpc-addr", "127.0.0.1:"+strconv.Itoa(grpc),
		"--playground-enabled=false", "--metrics-enabled=false", "--log-level", "warn")
	p := startChild(t, "openfga", filepath.Join(t.TempDir(), "openfga.log"), cmd)
	t.Cleanup(func() { _ = p.stop(syscall.SIGTERM) })
	url := "http://127.0.0.1:" + strconv.Itoa(http)
	waitHTTP(t, http2Client(), url+"/healthz")
	return url
}

func http2Client() *http.Client { return &http.Client{Timeout: 5 * time.Second} }

// waitHTTP polls url until it answers 200 (60 s at most).
func waitHTTP(t *testing.T, c *http.Client, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// topologyCA signs the proxy's certificate; certFile is the CA the clients trust.
type topologyCA struct {
	certFile, serverCert, serverKey string
	pool                            *x509.CertPool
}

func newTopologyCA(t *testing.T, dir string) topologyCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "topology CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	assert.NilError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	assert.NilError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "lancecat"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	assert.NilError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	assert.NilError(t, err)
	ca := topologyCA{certFile: filepath.Join(dir, "ca.pem"), serverCert: filepath.Join(dir, "tls.crt"),
		serverKey: filepath.Join(dir, "tls.key"), pool: x509.NewCertPool()}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	assert.NilError(t, os.WriteFile(ca.certFile, caPEM, 0o644))
	assert.NilError(t, os.WriteFile(ca.serverCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	assert.NilError(t, os.WriteFile(ca.serverKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	ca.pool.AppendCertsFromPEM(caPEM)
	return ca
}

// replica is one `lancecat serve` process on a fixed port, restartable.
type replica struct {
	name, bin, dir string
	env            []string
	port           int
	p              *child
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(r.bin, "serve", "--listen", "127.0.0.1:"+strconv.Itoa(r.port))
	cmd.Env = r.env
	r.p = startChild(t, r.name, filepath.Join(r.dir, r.name+".log"), cmd)
	t.Cleanup(func() { _ = r.p.stop(syscall.SIGKILL) })
}

func (r *replica) waitReady(t *testing.T) {
	t.Helper()
	waitHTTP(t, http2Client(), "http://127.0.0.1:"+strconv.Itoa(r.port)+"/readyz")
}

// stop ends the replica with sig: SIGTERM must end it cleanly (in-flight requests finish first).
func (r *replica) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	err := r.p.stop(sig)
	if sig == syscall.SIGTERM {
		assert.NilError(t, err, "%s on SIGTERM", r.name)
	}
}

// nginx is the TLS proxy in front of the replicas, logging every request with its upstreams.
type nginx struct {
	port      int
	accessLog string
}

func startNginx(t *testing.T, bin, dir string, ca topologyCA, replicas []*replica) nginx {
	t.Helper()
	prefix := filepath.Join(dir, "nginx")
	assert.NilError(t, os.MkdirAll(filepath.Join(prefix, "logs"), 0o755))
	n := nginx{port: freePort(t), accessLog: filepath.Join(prefix, "logs", "access.log")}
	var upstreams strings.Builder
	for _, r := range replicas {
		fmt.Fprintf(&upstreams, "    server 127.0.0.1:%d max_fails=1 fail_timeout=2s;\n", r.port)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;"
	}
	// proxy_next_upstream: a request that could not reach a replica (refused, reset before an
	// answer, 502/503 from one that is stopping) goes to the next one; nginx never resends a POST
	// once it was sent (no non_idempotent), so a write is applied at most once by the proxy.
	conf := fmt.Sprintf(`%s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/logs/error.log warn;
events { worker_connections 1024; }
http {
  log_format topology '$msec $status $request_time "$upstream_addr" "$upstream_status" "$request_method $uri"';
  access_log %[2]s/logs/access.log topology;
  client_body_temp_path %[2]s/body;
  proxy_temp_path %[2]s/proxy;
  fastcgi_temp_path %[2]s/fastcgi;
  uwsgi_temp_path %[2]s/uwsgi;
  scgi_temp_path %[2]s/scgi;
  client_max_body_size 300m;
  upstream lancecat {
%[3]s  }
  server {
    listen 127.0.0.1:%[4]d ssl http2;
    ssl_certificate %[5]s;
    ssl_certificate_key %[6]s;
    location / {
      proxy_pass http://lancecat;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto https;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 2s;
      proxy_read_timeout 120s;
      proxy_request_buffering on;
    }
  }
}
`, user, prefix, upstreams.String(), n.port, ca.serverCert, ca.serverKey)
	confFile := filepath.Join(prefix, "nginx.conf")
	assert.NilError(t, os.WriteFile(confFile, []byte(conf), 0o644))
	if out, err := exec.Command(bin, "-t", "-p", prefix, "-c", confFile, "-e", filepath.Join(prefix, "logs", "error.log")).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v: %s", err, out)
	}
	p := startChild(t, "nginx", filepath.Join(prefix, "logs", "stderr.log"),
		exec.Command(bin, "-p", prefix, "-c", confFile, "-e", filepath.Join(prefix, "logs", "error.log")))
	t.Cleanup(func() { _ = p.stop(syscall.SIGQUIT) })
	return n
}

// report reads the access log: requests, their statuses, retries by the proxy, p99 during the roll.
func (n nginx) report(t *testing.T, rollStart, rollEnd, killEnd time.Time) {
	t.Helper()
	f, err := os.Open(n.accessLog)
	assert.NilError(t, err)
	defer f.Close()
	type phase struct {
		name              string
		from, to          time.Time
		requests, retried int
		statuses          map[int]int
		times             []float64
	}
	phases := []*phase{
		{name: "before", to: rollStart},
		{name: "rolling restart", from: rollStart, to: rollEnd},
		{name: "kill and recovery", from: rollEnd, to: killEnd},
		{name: "after", from: killEnd, to: time.Now().Add(time.Hour)},
	}
	for _, p := range phases {
		p.statuses = map[int]int{}
	}
	sc := bufio.NewScanner(f)
	fiveHundreds := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		sec, _ := strconv.ParseFloat(fields[0], 64)
		at := time.Unix(0, int64(sec*1e9))
		status, _ := strconv.Atoi(fields[1])
		took, _ := strconv.ParseFloat(fields[2], 64)
		upstreams := strings.Trim(fields[3], `"`)
		for _, p := range phases {
			if !at.Before(p.from) && at.Before(p.to) {
				p.requests++
				p.statuses[status]++
				p.times = append(p.times, took*1000)
				if strings.Contains(upstreams, ",") {
					p.retried++
				}
			}
		}
		if status >= 500 {
			fiveHundreds++
		}
	}
	for _, p := range phases {
		t.Logf("proxy, %s: %d requests, statuses %v, %d retried on another replica by the proxy, p50 %.1f ms, p99 %.1f ms",
			p.name, p.requests, p.statuses, p.retried, percentile(p.times, 50), percentile(p.times, 99))
	}
	t.Logf("proxy: %d answers of 5xx reached a client (each retried by the SDK)", fiveHundreds)
}

// waitTables waits until the clients' tables exist (they create them first).
func waitTables(t *testing.T, c *http.Client, url, key string, alive func(), names ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, name := range names {
		for {
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/table/"+name+"/exists", strings.NewReader("{}"))
			req.Header.Set("x-api-key", key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNoContent {
					break
				}
			}
			alive()
			if time.Now().After(deadline) {
				t.Fatalf("table %s not created by its client", name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// tableIDs reads every id of a table through one replica with the Python SDK.
func tableIDs(t *testing.T, venv, url, key, table string) []int64 {
	t.Helper()
	code := `import json, os, sys, lancedb
db = lancedb.connect("db://lancecat", api_key=sys.argv[2], host_override=sys.argv[1])
t = db.open_table(sys.argv[3])
n = t.count_rows()
ids = t.search().select(["id"]).limit(n + 10).to_arrow().column("id").to_pylist()
print(json.dumps({"count": n, "ids": ids}), flush=True)
os._exit(0)`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), "-c", code, url, key, table)
	out, err := cmd.Output()
	assert.NilError(t, err, "reading %s: %s", table, exitStderr(err))
	var got struct {
		Count int
		IDs   []int64
	}
	assert.NilError(t, json.Unmarshal(lastLine(out), &got), "%s", out)
	assert.Equal(t, got.Count, len(got.IDs), "count_rows and the rows read agree")
	return got.IDs
}

func lastLine(out []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// percentile of ms (p in 0..100; 100 is the max); 0 for none.
func percentile(ms []float64, p float64) float64 {
	if len(ms) == 0 {
		return 0
	}
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}
