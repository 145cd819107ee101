package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"gotest.tools/v3/assert"
)

// TestImageRuns builds the image as `make` would, unpacks its root filesystem, and runs its
// entrypoint chrooted there as the image's user: it must serve /healthz and a table with nothing
// but what the image holds (no shell, no libc).
func TestImageRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("LANCECAT_REQUIRE_SERVICES") == "1" {
			t.Fatal("the chroot test needs root (chroot(2), chown to 65532) and LANCECAT_REQUIRE_SERVICES=1 forbids skipping it")
		}
		t.Skip("the chroot test needs root (chroot(2), chown to 65532); run as root or set LANCECAT_REQUIRE_SERVICES=1 to make this a failure")
	}
	dir := t.TempDir()
	out, tarPath := filepath.Join(dir, "oci"), filepath.Join(dir, "lancecat.tar")
	assert.NilError(t, Build(Options{Src: "../..", CACerts: "/etc/ssl/certs/ca-certificates.crt", Out: out, Tar: tarPath, Tag: "lancecat:test", Version: "test"}))

	idx, err := layout.ImageIndexFromPath(out)
	assert.NilError(t, err)
	im, err := idx.IndexManifest()
	assert.NilError(t, err)
	assert.Equal(t, len(im.Manifests), 1)
	img, err := idx.Image(im.Manifests[0].Digest)
	assert.NilError(t, err)

	// The tarball holds the same image (its manifest is docker-load's, so compare the configs).
	timg, err := tarball.ImageFromPath(tarPath, nil)
	assert.NilError(t, err)
	c1, err := img.ConfigName()
	assert.NilError(t, err)
	c2, err := timg.ConfigName()
	assert.NilError(t, err)
	assert.Equal(t, c1, c2)
	d1, err := img.Digest()
	assert.NilError(t, err)

	layers, err := img.Layers()
	assert.NilError(t, err)
	var compressed, uncompressed int64
	for _, l := range layers {
		c, err := l.Size()
		assert.NilError(t, err)
		rc, err := l.Uncompressed()
		assert.NilError(t, err)
		u, err := io.Copy(io.Discard, rc)
		assert.NilError(t, err)
		rc.Close()
		compressed, uncompressed = compressed+c, uncompressed+u
	}
	t.Logf("image %s: %d layer(s), %.1f MiB compressed, %.1f MiB uncompressed", d1, len(layers), float64(compressed)/(1<<20), float64(uncompressed)/(1<<20))

	root := filepath.Join(dir, "rootfs")
	assert.NilError(t, unpack(mutate.Extract(img), root))
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/env"} {
		_, err := os.Lstat(filepath.Join(root, shell))
		assert.Assert(t, errors.Is(err, os.ErrNotExist), "the image holds %s", shell)
	}
	assert.NilError(t, checkStatic(filepath.Join(root, BinaryPath)))
	ver := exec.Command("/"+BinaryPath, "--version")
	ver.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: UID, Gid: UID}}
	vout, err := ver.CombinedOutput()
	assert.NilError(t, err, string(vout))
	assert.Assert(t, strings.HasPrefix(string(vout), "lancecat test (commit "), "the image's binary is stamped with -version: %s", vout)

	cf, err := img.ConfigFile()
	assert.NilError(t, err)
	assert.Equal(t, cf.Config.User, "65532:65532")
	port := freePort(t)
	cat := filepath.Join(cf.Config.WorkingDir, "catalog")
	argv := append(append(append([]string{}, cf.Config.Entrypoint...), cf.Config.Cmd...), "--root", cat, "--listen", "127.0.0.1:"+port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = cf.Config.Env // LANCECAT_LISTEN is overridden by the flag: the test must not bind 0.0.0.0
	cmd.Dir = cf.Config.WorkingDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: UID, Gid: UID}}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("lancecat's output:\n%s", logs.String())
		}
	})

	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		assert.Assert(t, time.Now().Before(deadline), "no /healthz within 30s: %v\n%s", err, logs.String())
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, get(t, base+"/readyz"), http.StatusOK)
	post(t, base+"/v1/namespace/sales/create", `{}`)
	post(t, base+"/v1/table/sales$orders/declare", `{}`)
	desc := post(t, base+"/v1/table/sales$orders/describe", `{}`)
	loc, _ := desc["location"].(string)
	assert.Assert(t, strings.Contains(loc, "orders"), "describe: %v", desc)
	list := post(t, base+"/v1/namespace/sales/table/list", ``)
	assert.Assert(t, strings.Contains(fmt.Sprint(list["tables"]), "orders"), "list: %v", list)

	// What it wrote is on the image's /data, owned by the image's user.
	st, err := os.Stat(filepath.Join(root, cat))
	assert.NilError(t, err)
	assert.Equal(t, st.Sys().(*syscall.Stat_t).Uid, uint32(UID))
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	assert.NilError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	assert.NilError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-api-key", "local")
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusOK, "%s %s: %s", method, url, raw)
	var out map[string]any
	assert.NilError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	assert.NilError(t, err)
	return port
}

// unpack writes a flattened image tar under root, keeping modes and owners (root only).
func unpack(r io.ReadCloser, root string) error {
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if err := errors.Join(err, f.Close()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected %q (type %c) in the image", h.Name, h.Typeflag)
		}
		if err := errors.Join(os.Lchown(p, h.Uid, h.Gid), os.Chmod(p, os.FileMode(h.Mode).Perm()|modeBits(h.Mode))); err != nil {
			return err
		}
	}
}

func modeBits(m int64) os.FileMode {
	var fm os.FileMode
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// TestBuildBinaryStampsVersion: the binary the image builder builds says the -version it was given
// and the checkout's commit (lancecat version --json).
func TestBuildBinaryStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lancecat")
	}
	bin := filepath.Join(t.TempDir(), "lancecat")
	assert.NilError(t, BuildBinary("../..", "", "v1.2.3-image", bin))
	out, err := exec.Command(bin, "version", "--json").Output()
	assert.NilError(t, err)
	var in struct{ Version, Commit, Date string }
	assert.NilError(t, json.Unmarshal(out, &in))
	assert.Equal(t, in.Version, "v1.2.3-image")
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err == nil {
		assert.Equal(t, in.Commit, strings.TrimSpace(string(head)))
		assert.Assert(t, in.Date != "unknown", string(out))
	}
}
