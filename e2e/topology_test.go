package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// TestTopologyRollingRestart (issue 32, item 4): the deployment the chart and the compose file
// describe, from processes on this machine — nginx from Debian's package terminating TLS in front
// of three `lancecat serve` replicas on one MinIO root, with OpenFGA on its PostgreSQL datastore
// (Debian's postgresql). The official Node and Python SDKs in remote mode write and read through
// the proxy while the replicas are restarted one at a time (SIGTERM, as a rolling update does) and
// then one is killed (SIGKILL). No operation may fail beyond what the SDKs' own retries absorb,
// and every acknowledged row must be there. The figures (requests, failures, retries by the
// proxy, p99 during the roll) are logged for the closing note.
func TestTopologyRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole topology")
	}
	s3cfg, bucket := testenv.S3Bucket(t)
	node := newestSDK(t)
	venv := newestVenv(t)
	bins := topologyBinaries(t)
	dir := t.TempDir()

	pg := startPostgres(t, bins.postgres)
	fgaURL := startOpenFGAOnPostgres(t, bins.openfga, pg)
	ca := newTopologyCA(t, dir)

	root := "s3://" + bucket + "/catalog"
	env := append(os.Environ(),
		"LANCECAT_ROOT="+root,
		"LANCECAT_S3_ENDPOINT="+s3cfg.Endpoint, "LANCECAT_S3_REGION="+s3cfg.Region,
		"LANCECAT_S3_ACCESS_KEY="+s3cfg.AccessKey, "LANCECAT_S3_SECRET_KEY="+s3cfg.SecretKey,
		"LANCECAT_S3_PATH_STYLE=true", "LANCECAT_S3_ALLOW_HTTP=true",
		"LANCECAT_AUTHZ=openfga", "LANCECAT_OPENFGA_URL="+fgaURL, "LANCECAT_OPENFGA_STORE=lancecat",
		"LANCECAT_OPENFGA_TIMEOUT=10s", "LANCECAT_ESTATE_ADMINS=user:ada",
		"LANCECAT_LOG_LEVEL=warn", "LANCECAT_SHUTDOWN_TIMEOUT=20s", "LANCECAT_CONSOLE=false",
	)
	keyCmd := exec.Command(bins.lancecat, "apikey", "create", "--principal", "user:ada", "--description", "topology")
	keyCmd.Env = env
	keyOut, err := keyCmd.Output()
	assert.NilError(t, err, "apikey create: %s", exitStderr(err))
	key := strings.TrimSpace(string(keyOut))

	replicas := make([]*replica, 3)
	for i := range replicas {
		replicas[i] = &replica{name: fmt.Sprintf("r%d", i+1), bin: bins.lancecat, env: env, port: freePort(t), dir: dir}
		replicas[i].start(t)
	}
	for _, r := range replicas {
		r.waitReady(t)
	}
	proxy := startNginx(t, bins.nginx, dir, ca, replicas)
	proxyURL := "https://127.0.0.1:" + strconv.Itoa(proxy.port)
	caClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	waitHTTP(t, caClient, proxyURL+"/readyz")

	// The clients, writing from now until the stop file appears.
	stop := filepath.Join(dir, "stop")
	type result struct {
		name string
		out  []byte
		err  error
	}
	results := make(chan result, 2)
	nodeCmd := testenv.NodeCmd(context.Background(), testenv.Script("e2e", "topology-load.mjs"), proxyURL, ca.certFile, key, "load_node", stop)
	nodeCmd.Env = append(nodeCmd.Env, "LANCEDB_DIR="+node)
	pyCmd := exec.Command(filepath.Join(venv, "bin", "python"), filepath.Join(pythonScripts(), "topology_load.py"), proxyURL, ca.certFile, key, "load_py", stop)
	for _, c := range []struct {
		name string
		cmd  *exec.Cmd
	}{{"node", nodeCmd}, {"python", pyCmd}} {
		go func() {
			var stderr strings.Builder
			c.cmd.Stderr = &stderr
			out, err := c.cmd.Output()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, stderr.String())
			}
			results <- result{c.name, out, err}
		}()
	}
	// Let both create their tables and write a little before the roll.
	waitTables(t, caClient, proxyURL, key, func() {
		select {
		case r := <-results:
			t.Fatalf("the %s client ended before the roll: %v\n%s", r.name, r.err, r.out)
		default:
		}
	}, "load_node", "load_py")
	time.Sleep(2 * time.Second)

	rollStart := time.Now()
	for _, r := range replicas { // the rolling update: one at a time, each back and ready first
		r.stop(t, syscall.SIGTERM)
		time.Sleep(500 * time.Millisecond) // as a pod is recreated
		r.start(t)
		r.waitReady(t)
		time.Sleep(time.Second)
	}
	rollEnd := time.Now()
	killed := replicas[1]
	killed.stop(t, syscall.SIGKILL)
	time.Sleep(2 * time.Second)
	killed.start(t)
	killed.waitReady(t)
	time.Sleep(2 * time.Second)
	killEnd := time.Now()
	assert.NilError(t, os.WriteFile(stop, nil, 0o600))

	type loadOut struct {
		Acked, Failed  []int
		Errors         []string
		Ops, FailedOps int
		LatenciesMs    []float64 `json:"latenciesMs"`
	}
	outs := map[string]loadOut{}
	for range 2 {
		select {
		case r := <-results:
			assert.NilError(t, r.err, "%s client", r.name)
			var o loadOut
			assert.NilError(t, json.Unmarshal(lastLine(r.out), &o), "%s: %s", r.name, r.out)
			outs[r.name] = o
		case <-time.After(3 * time.Minute):
			t.Fatal("the clients did not stop")
		}
	}

	// Every acknowledged row is there, through a replica directly.
	for name, table := range map[string]string{"node": "load_node", "python": "load_py"} {
		o := outs[name]
		ids := tableIDs(t, venv, "http://127.0.0.1:"+strconv.Itoa(replicas[0].port), key, table)
		seen := map[int64]int{}
		for _, id := range ids {
			seen[id]++
		}
		missing, dup := 0, 0
		for _, k := range o.Acked {
			for i := range 20 {
				switch seen[int64(k*20+i)] {
				case 0:
					missing++
				case 1:
				default:
					dup++
				}
			}
		}
		t.Logf("%s: %d operations, %d failed after the SDK's retries, %d batches acknowledged (%d rows), %d failed; table holds %d rows; p50 %.1f ms, p99 %.1f ms, max %.1f ms",
			name, o.Ops, o.FailedOps, len(o.Acked), 20*len(o.Acked), len(o.Failed), len(ids),
			percentile(o.LatenciesMs, 50), percentile(o.LatenciesMs, 99), percentile(o.LatenciesMs, 100))
		for _, e := range o.Errors {
			t.Logf("%s: %s", name, e)
		}
		assert.Check(t, o.FailedOps == 0, "%s: %d operations failed beyond the SDK's retries", name, o.FailedOps)
		assert.Check(t, missing == 0, "%s: %d acknowledged rows missing", name, missing)
		// A write in flight on the killed replica may have committed before its answer was lost:
		// the SDK then retries it (inserts carry no idempotency key), so at most the batch in
		// flight at the kill may be there twice. Anything more is a lost-answer bug of ours.
		assert.Check(t, dup <= 20, "%s: %d acknowledged rows stored twice", name, dup)
		assert.Check(t, len(o.Acked) >= 10, "%s wrote only %d batches", name, len(o.Acked))
	}
	proxy.report(t, rollStart, rollEnd, killEnd)
}
