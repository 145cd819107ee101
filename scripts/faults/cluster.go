// Package faults is the catalog's fault campaign (issue 36): three `lancecat serve` replicas on
// one MinIO root with a real OpenFGA, every replica's connections to both through its own
// toxiproxy proxies (run in-process, loopback only), clients recording a history of every call,
// a nemesis injecting network faults and killing processes, and checkers reading the history:
// porcupine for linearizability of the catalog's objects, and the data invariants.
//
// The harness owns its MinIO process (the binary of scripts/tools.sh, started on its own data
// directory) so it can restart it; OpenFGA is the one scripts/with-services.sh started.
package faults

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rs/zerolog"
)

const (
	s3Access = "faults"
	s3Secret = "faults-secret-key"
	bucket   = "faults"
	admin    = "user:ada"
)

// proc is a child process logging to a file.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(name, logFile string, cmd *exec.Cmd) (*proc, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	// The kernel ends the child if the harness dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// stop signals the process and waits for it (SIGKILL after 20 s).
func (p *proc) stop(sig syscall.Signal) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v", url, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Cluster is the system under test.
type Cluster struct {
	Dir       string
	Lancecat  string // binary
	minioBin  string
	minioDir  string
	minioPrt  int
	minioMu   sync.Mutex
	minio     *proc
	FGA       string // http://host:port of OpenFGA (direct)
	store     string
	tox       *toxiproxy.ApiServer
	Replicas  []*Replica
	Key       string // the estate admin's API key
	ReaderKey string // the API key of reader, who holds only what the workload grants
}

// reader is the principal the authorization workload grants and revokes.
const reader = "user:bob"

// AllowCacheTTL is the documented bound of a revocation (LANCECAT_OPENFGA_ALLOW_CACHE_TTL): a
// replica may answer from an allow this long after a revoke elsewhere.
const AllowCacheTTL = time.Second

// Replica is one `lancecat serve` with its two proxies.
type Replica struct {
	Name     string
	Port     int
	S3, FGA  *toxiproxy.Proxy
	env      []string
	bin, dir string
	mu       sync.Mutex
	p        *proc
}

// URL is the replica's base URL (clients talk to it directly: the faults are behind it).
func (r *Replica) URL() string { return "http://127.0.0.1:" + strconv.Itoa(r.Port) }

// Config of a campaign's cluster.
type Config struct {
	Dir       string // work directory (logs, MinIO data)
	Lancecat  string // a built lancecat binary
	MinIO     string // the MinIO binary
	OpenFGA   string // OpenFGA's HTTP URL
	Replicas  int
	StoreName string
}

// StartCluster starts MinIO, the proxies and the replicas, and creates the admin's API key.
func StartCluster(ctx context.Context, cfg Config) (*Cluster, error) {
	c := &Cluster{Dir: cfg.Dir, Lancecat: cfg.Lancecat, minioBin: cfg.MinIO, FGA: cfg.OpenFGA, store: cfg.StoreName}
	c.minioDir = filepath.Join(cfg.Dir, "minio")
	if err := os.MkdirAll(filepath.Join(c.minioDir, "data"), 0o755); err != nil {
		return nil, err
	}
	var err error
	if c.minioPrt, err = freePort(); err != nil {
		return nil, err
	}
	if err := c.startMinIO(ctx); err != nil {
		return nil, err
	}
	if err := c.makeBucket(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.tox = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	fgaHost := strings.TrimPrefix(strings.TrimPrefix(cfg.OpenFGA, "http://"), "https://")
	base := c.baseEnv()
	for i := range cfg.Replicas {
		r := &Replica{Name: fmt.Sprintf("r%d", i+1), bin: cfg.Lancecat, dir: cfg.Dir}
		if r.Port, err = freePort(); err != nil {
			c.Close()
			return nil, err
		}
		r.S3 = toxiproxy.NewProxy(c.tox, r.Name+"-s3", "127.0.0.1:0", "127.0.0.1:"+strconv.Itoa(c.minioPrt))
		r.FGA = toxiproxy.NewProxy(c.tox, r.Name+"-fga", "127.0.0.1:0", fgaHost)
		for _, p := range []*toxiproxy.Proxy{r.S3, r.FGA} {
			if err := c.tox.Collection.Add(p, true); err != nil {
				c.Close()
				return nil, fmt.Errorf("toxiproxy %s: %w", p.Name, err)
			}
		}
		r.env = append(append([]string(nil), base...),
			"LANCECAT_S3_ENDPOINT="+r.S3.Listen,
			"LANCECAT_OPENFGA_URL=http://"+r.FGA.Listen)
		c.Replicas = append(c.Replicas, r)
	}
	if err := c.createKeys(ctx); err != nil {
		c.Close()
		return nil, err
	}
	// The first replica alone first: it writes the authorization model to the store.
	for i, r := range c.Replicas {
		if err := r.Start(); err != nil {
			c.Close()
			return nil, err
		}
		if i == 0 {
			if err := r.WaitReady(ctx, time.Minute); err != nil {
				c.Close()
				return nil, err
			}
		}
	}
	for _, r := range c.Replicas {
		if err := r.WaitReady(ctx, time.Minute); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANCECAT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"LANCECAT_ROOT=s3://"+bucket+"/catalog",
		"LANCECAT_S3_REGION=us-east-1",
		"LANCECAT_S3_ACCESS_KEY="+s3Access, "LANCECAT_S3_SECRET_KEY="+s3Secret,
		"LANCECAT_S3_PATH_STYLE=true", "LANCECAT_S3_ALLOW_HTTP=true",
		"LANCECAT_AUTHZ=openfga", "LANCECAT_OPENFGA_STORE="+c.store,
		"LANCECAT_OPENFGA_TIMEOUT=5s", "LANCECAT_ESTATE_ADMINS="+admin,
		"LANCECAT_LOG_LEVEL=warn", "LANCECAT_SHUTDOWN_TIMEOUT=5s", "LANCECAT_CONSOLE=false",
		"LANCECAT_MAINTENANCE_INTERVAL=0s",
		"LANCECAT_OPENFGA_ALLOW_CACHE_TTL="+AllowCacheTTL.String(),
	)
}

func (c *Cluster) createKeys(ctx context.Context) (err error) {
	if c.Key, err = c.createKey(ctx, admin); err != nil {
		return err
	}
	c.ReaderKey, err = c.createKey(ctx, reader)
	return err
}

func (c *Cluster) createKey(ctx context.Context, principal string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Lancecat, "apikey", "create", "--principal", principal, "--description", "faults")
	cmd.Env = append(c.baseEnv(),
		"LANCECAT_S3_ENDPOINT=127.0.0.1:"+strconv.Itoa(c.minioPrt),
		"LANCECAT_OPENFGA_URL="+c.FGA)
	return output(cmd, "apikey create")
}

// output is cmd's standard output, trimmed; its standard error is in the error of a failure.
func output(cmd *exec.Cmd, what string) (string, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", what, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func (c *Cluster) startMinIO(ctx context.Context) error {
	c.minioMu.Lock()
	defer c.minioMu.Unlock()
	home := filepath.Join(c.minioDir, "home")
	_ = os.MkdirAll(home, 0o755)
	cmd := exec.Command(c.minioBin, "server", "--address", "127.0.0.1:"+strconv.Itoa(c.minioPrt),
		"--console-address", "127.0.0.1:0", filepath.Join(c.minioDir, "data"))
	cmd.Env = append(os.Environ(), "HOME="+home, "MINIO_ROOT_USER="+s3Access, "MINIO_ROOT_PASSWORD="+s3Secret,
		"MINIO_SITE_REGION=us-east-1", "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	p, err := startProc("minio", filepath.Join(c.Dir, "minio.log"), cmd)
	if err != nil {
		return err
	}
	c.minio = p
	return waitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(c.minioPrt)+"/minio/health/live", time.Minute)
}

// RestartMinIO stops MinIO (SIGTERM, as a rolling restart of the store does) and starts it again
// on the same port and data.
func (c *Cluster) RestartMinIO(ctx context.Context) error {
	c.minioMu.Lock()
	p := c.minio
	c.minioMu.Unlock()
	p.stop(syscall.SIGTERM)
	time.Sleep(time.Second)
	return c.startMinIO(ctx)
}

func (c *Cluster) makeBucket(ctx context.Context) error {
	mc, err := minio.New("127.0.0.1:"+strconv.Itoa(c.minioPrt), &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: "us-east-1"})
	if err != nil {
		return err
	}
	return mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: "us-east-1"})
}

// Start starts the replica's process.
func (r *Replica) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd := exec.Command(r.bin, "serve", "--listen", "127.0.0.1:"+strconv.Itoa(r.Port))
	cmd.Env = r.env
	p, err := startProc(r.Name, filepath.Join(r.dir, r.Name+".log"), cmd)
	if err != nil {
		return err
	}
	r.p = p
	return nil
}

// WaitReady waits for /readyz.
func (r *Replica) WaitReady(ctx context.Context, d time.Duration) error {
	return waitHTTP(ctx, r.URL()+"/readyz", d)
}

// Kill ends the replica with sig.
func (r *Replica) Kill(sig syscall.Signal) {
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	p.stop(sig)
}

// Close stops every process and proxy.
func (c *Cluster) Close() {
	for _, r := range c.Replicas {
		r.Kill(syscall.SIGKILL)
	}
	if c.tox != nil {
		_ = c.tox.Collection.Clear()
	}
	c.minioMu.Lock()
	p := c.minio
	c.minioMu.Unlock()
	p.stop(syscall.SIGTERM)
}
