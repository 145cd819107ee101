package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestSDKVendedCredentials: the official SDK, in namespace mode and with no S3 credentials of its
// own, creates, appends, opens and queries a table on MinIO through the credentials lancecat vends
// (--vend-credentials, authorization on): the writer's through declare's read-write credential,
// the reader's through describe's read-only one, whose write the store refuses.
func TestSDKVendedCredentials(t *testing.T) {
	dirs := testenv.SDKs(t)
	env := testenv.S3(t)
	_, bucket := testenv.S3Bucket(t)
	cfg := app.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = "s3://" + bucket + "/catalog"
	cfg.ControlRoot = "s3://" + bucket + "/control"
	cfg.S3Endpoint, cfg.S3Region = env.Endpoint, env.Region
	cfg.S3AccessKey, cfg.S3SecretKey = env.AccessKey, env.SecretKey
	cfg.S3PathStyle, cfg.S3AllowHTTP = true, true
	cfg.Vend.Credentials, cfg.Vend.Duration = true, 15*time.Minute
	useOpenFGA(t, &cfg, "writer")
	keys := apiKeys(t, cfg, "vend e2e", "writer", "reader")
	writerKey, readerKey := keys[0], keys[1]
	url := serve(t, cfg)
	post := func(key, route, body string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+route, strings.NewReader(body))
		assert.NilError(t, err)
		req.Header.Set("content-type", "application/json")
		req.Header.Set("x-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, http.StatusOK, route)
	}
	post(writerKey, "/v1/namespace/ns/create", `{}`)
	// The SDK creates the tables: the reader's grant is on their namespace (tables inherit it).
	post(writerKey, "/v1/access/grant", `{"object_type":"namespace","object_id":"ns","subject":"user:reader","relation":"reader"}`)

	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var procEnv []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "AWS_") {
					procEnv = append(procEnv, kv)
				}
			}
			wh, _ := json.Marshal(map[string]string{"x-api-key": writerKey})
			rh, _ := json.Marshal(map[string]string{"x-api-key": readerKey})
			procEnv = append(procEnv, "LANCEDB_DIR="+dir, "LANCECAT_E2E_WRITER_HEADERS="+string(wh), "LANCECAT_E2E_READER_HEADERS="+string(rh))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", script(t, "sdk-vend.mjs"), url, "t"+strconv.Itoa(i))
			cmd.Env = procEnv
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			assert.NilError(t, err, "SDK script failed")
		})
	}
}
