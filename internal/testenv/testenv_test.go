package testenv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServicesReachable is the end-to-end check of scripts/with-services.sh:
// with the environment set, both services must answer their health probes.
func TestServicesReachable(t *testing.T) {
	t.Run("MinIO", func(t *testing.T) {
		s3 := S3(t)
		if s3.Region != DefaultS3Region {
			t.Errorf("region = %q, want %q", s3.Region, DefaultS3Region)
		}
		httpGetOK(t, s3.URL()+"/minio/health/live")
	})
	t.Run("OpenFGA", func(t *testing.T) {
		body := httpGetOK(t, OpenFGA(t)+"/healthz")
		if !strings.Contains(body, "SERVING") {
			t.Errorf("OpenFGA /healthz body = %q, want it to contain SERVING", body)
		}
	})
}

func httpGetOK(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, body %q", url, resp.StatusCode, b)
	}
	return string(b)
}

// fakeTB records Skip/Fatal instead of stopping the goroutine. The embedded
// testing.TB satisfies the interface's unexported method; only the methods
// below are ever called by the code under test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skip(args ...any)      { f.skipped = true; f.msg = sprint(args...) }
func (f *fakeTB) Fatal(args ...any)     { f.failed = true; f.msg = sprint(args...) }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func sprint(args ...any) string {
	var b strings.Builder
	for _, a := range args {
		if s, ok := a.(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

func clearEnv(t *testing.T) {
	for _, k := range []string{EnvS3Endpoint, EnvS3AccessKey, EnvS3SecretKey, EnvS3Region, EnvOpenFGAURL, EnvRequireServices} {
		t.Setenv(k, "")
	}
}

func TestUnsetSkips(t *testing.T) {
	clearEnv(t)
	f := &fakeTB{}
	if got := S3(f); got != (S3Env{}) || !f.skipped || f.failed {
		t.Fatalf("S3: got %+v skipped=%v failed=%v", got, f.skipped, f.failed)
	}
	if !strings.Contains(f.msg, "MinIO not available ("+EnvS3Endpoint+" unset)") || !strings.Contains(f.msg, "make test") {
		t.Errorf("S3 skip message = %q", f.msg)
	}
	f = &fakeTB{}
	if got := OpenFGA(f); got != "" || !f.skipped || f.failed {
		t.Fatalf("OpenFGA: got %q skipped=%v failed=%v", got, f.skipped, f.failed)
	}
	if !strings.Contains(f.msg, "OpenFGA not available ("+EnvOpenFGAURL+" unset)") {
		t.Errorf("OpenFGA skip message = %q", f.msg)
	}
}

func TestUnsetFailsWhenRequired(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvRequireServices, "1")
	f := &fakeTB{}
	S3(f)
	if !f.failed || f.skipped {
		t.Errorf("S3: failed=%v skipped=%v, want a failure", f.failed, f.skipped)
	}
	f = &fakeTB{}
	OpenFGA(f)
	if !f.failed || f.skipped {
		t.Errorf("OpenFGA: failed=%v skipped=%v, want a failure", f.failed, f.skipped)
	}
}

func TestSetReturnsValues(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvS3Endpoint, "127.0.0.1:9000")
	t.Setenv(EnvS3AccessKey, "ak")
	t.Setenv(EnvS3SecretKey, "sk")
	t.Setenv(EnvOpenFGAURL, "http://127.0.0.1:8080/")
	f := &fakeTB{}
	want := S3Env{Endpoint: "127.0.0.1:9000", AccessKey: "ak", SecretKey: "sk", Region: DefaultS3Region}
	if got := S3(f); got != want || f.skipped || f.failed {
		t.Errorf("S3 = %+v (skipped=%v failed=%v), want %+v", got, f.skipped, f.failed, want)
	}
	if got := OpenFGA(f); got != "http://127.0.0.1:8080" || f.skipped || f.failed {
		t.Errorf("OpenFGA = %q (skipped=%v failed=%v)", got, f.skipped, f.failed)
	}
}

func TestMisconfiguredFails(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvS3Endpoint, "http://127.0.0.1:9000")
	t.Setenv(EnvS3AccessKey, "ak")
	t.Setenv(EnvS3SecretKey, "sk")
	t.Setenv(EnvOpenFGAURL, "127.0.0.1:8080")
	f := &fakeTB{}
	S3(f)
	if !f.failed {
		t.Error("S3 with a scheme in the endpoint did not fail")
	}
	t.Setenv(EnvS3Endpoint, "127.0.0.1:9000")
	t.Setenv(EnvS3SecretKey, "")
	f = &fakeTB{}
	S3(f)
	if !f.failed {
		t.Error("S3 without a secret key did not fail")
	}
	f = &fakeTB{}
	OpenFGA(f)
	if !f.failed {
		t.Error("OpenFGA URL without a scheme did not fail")
	}
}
