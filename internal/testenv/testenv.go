// Package testenv gives tests access to the real services (MinIO, OpenFGA)
// started by scripts/with-services.sh, which `make test` wraps around
// `go test`.
//
// When the services are not configured (plain `go test`), the accessors skip
// the calling test with a message saying how to run it. When
// LANCECAT_REQUIRE_SERVICES=1 is set they fail it instead, so a CI or
// `make test` run can never pass by silently skipping.
package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Environment variables exported by scripts/with-services.sh.
const (
	EnvS3Endpoint  = "LANCECAT_TEST_S3_ENDPOINT" // host:port, plain HTTP
	EnvS3AccessKey = "LANCECAT_TEST_S3_ACCESS_KEY"
	EnvS3SecretKey = "LANCECAT_TEST_S3_SECRET_KEY"
	EnvS3Region    = "LANCECAT_TEST_S3_REGION"   // defaults to DefaultS3Region
	EnvOpenFGAURL  = "LANCECAT_TEST_OPENFGA_URL" // http://host:port

	// EnvRequireServices, when "1", turns a missing service into a test
	// failure instead of a skip.
	EnvRequireServices = "LANCECAT_REQUIRE_SERVICES"

	DefaultS3Region = "us-east-1"
)

// S3Env describes the S3-compatible (MinIO) endpoint available to tests.
type S3Env struct {
	Endpoint  string // host:port, no scheme; the server speaks plain HTTP
	AccessKey string
	SecretKey string
	Region    string
}

// URL returns the endpoint as an http:// URL.
func (e S3Env) URL() string { return "http://" + e.Endpoint }

// S3 returns the test MinIO's coordinates, or skips t (fails it when
// LANCECAT_REQUIRE_SERVICES=1) if none is configured.
func S3(t testing.TB) S3Env {
	t.Helper()
	env := S3Env{
		Endpoint:  os.Getenv(EnvS3Endpoint),
		AccessKey: os.Getenv(EnvS3AccessKey),
		SecretKey: os.Getenv(EnvS3SecretKey),
		Region:    os.Getenv(EnvS3Region),
	}
	if env.Endpoint == "" {
		unavailable(t, "MinIO", EnvS3Endpoint)
		return S3Env{}
	}
	if strings.Contains(env.Endpoint, "://") {
		t.Fatalf("testenv: %s=%q must be host:port without a scheme", EnvS3Endpoint, env.Endpoint)
		return S3Env{}
	}
	if env.AccessKey == "" || env.SecretKey == "" {
		// Half-configured is a broken setup, never a reason to skip.
		t.Fatalf("testenv: %s is set but %s or %s is empty", EnvS3Endpoint, EnvS3AccessKey, EnvS3SecretKey)
		return S3Env{}
	}
	if env.Region == "" {
		env.Region = DefaultS3Region
	}
	return env
}

// OpenFGA returns the base URL (http://host:port) of the test OpenFGA HTTP
// API, or skips t (fails it when LANCECAT_REQUIRE_SERVICES=1) if none is
// configured.
func OpenFGA(t testing.TB) string {
	t.Helper()
	u := strings.TrimRight(os.Getenv(EnvOpenFGAURL), "/")
	if u == "" {
		unavailable(t, "OpenFGA", EnvOpenFGAURL)
		return ""
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		t.Fatalf("testenv: %s=%q must be an http(s):// URL", EnvOpenFGAURL, u)
		return ""
	}
	return u
}

// RequireServices reports whether LANCECAT_REQUIRE_SERVICES=1.
func RequireServices() bool { return os.Getenv(EnvRequireServices) == "1" }

func unavailable(t testing.TB, service, envVar string) {
	t.Helper()
	unavailableHint(t, service, envVar, "scripts/with-services.sh, which starts it")
}

// unavailableHint is unavailable naming the script (wrapper) that provides the service.
func unavailableHint(t testing.TB, service, envVar, wrapper string) {
	t.Helper()
	msg := fmt.Sprintf("%s not available (%s unset): run `make test`, "+
		"or wrap the command in %s", service, envVar, wrapper)
	if RequireServices() {
		t.Fatal("testenv: " + msg + " [" + EnvRequireServices + "=1, so this is an error, not a skip]")
		return
	}
	t.Skip(msg)
}
