// Command image builds lancecat's container image without a container engine: one layer holding a
// static lancecat binary, the CA bundle, a passwd/group naming the non-root user 65532, an empty
// /data and /tmp — no shell, no package manager, nothing else — written as an OCI image layout
// (and optionally a docker-load tarball). The repository's Dockerfile produces the same contents
// for people with Docker.
//
//	go run ./image -src .. -out ../bin/image            # builds ../cmd/lancecat itself
//	go run ./image -bin /path/to/static/lancecat -out dir -tar lancecat.tar
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts; the Dockerfile spells the same ones.
const (
	UID        = 65532
	User       = "lancecat"
	BinaryPath = "usr/local/bin/lancecat"
	CAPath     = "etc/ssl/certs/ca-certificates.crt"
	DataDir    = "data"
	APIPort    = "2333"
	// OpsPort is the operations listener (--metrics-addr: /metrics, pprof) the chart and compose use.
	OpsPort = "9090"
)

func main() {
	var o Options
	flag.StringVar(&o.Binary, "bin", "", "a static lancecat binary (empty: build ./cmd/lancecat of -src with CGO_ENABLED=0)")
	flag.StringVar(&o.Src, "src", "..", "the lancecat repository (with -bin empty)")
	flag.StringVar(&o.GOARCH, "goarch", "", "GOARCH to build for (empty: this machine's)")
	flag.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the image")
	flag.StringVar(&o.Out, "out", "", "directory to write the OCI image layout to (required)")
	flag.StringVar(&o.Tar, "tar", "", "also write a `docker load` tarball here")
	flag.StringVar(&o.Tag, "tag", "lancecat:dev", "the reference the layout and tarball name")
	flag.StringVar(&o.Version, "version", "dev", "the version stamped into the binary (`lancecat version`, lancecat_build_info) and org.opencontainers.image.version")
	flag.Parse()
	if o.Out == "" {
		log.Fatal("image: -out is required")
	}
	if err := Build(o); err != nil {
		log.Fatalf("image: %v", err)
	}
}

// Options says what Build builds and where it writes it.
type Options struct {
	Binary, Src, GOARCH, CACerts, Out, Tar, Tag, Version string
}

// Build writes the image as an OCI layout to o.Out (and a tarball to o.Tar when set).
func Build(o Options) error {
	bin := o.Binary
	if bin == "" {
		dir, err := os.MkdirTemp("", "lancecat-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "lancecat")
		if err := BuildBinary(o.Src, o.GOARCH, o.Version, bin); err != nil {
			return err
		}
	}
	img, err := Image(bin, o.CACerts, o.GOARCH, o.Version)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(o.Tag)
	if err != nil {
		return fmt.Errorf("-tag: %w", err)
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	p, err := layout.Write(o.Out, empty.Index)
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(),
	})); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	if o.Tar != "" {
		if err := tarball.WriteToFile(o.Tar, ref, img); err != nil {
			return fmt.Errorf("write tarball: %w", err)
		}
	}
	return nil
}

// BuildBinary builds src's ./cmd/lancecat statically (CGO_ENABLED=0, -trimpath) into out, stamped
// as the Makefile stamps it: version, and src's commit and commit date when src is a git checkout.
func BuildBinary(src, goarch, version, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w "+Ldflags(src, version), "-o", abs, "./cmd/lancecat")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if goarch != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+goarch)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/lancecat in %s: %w", src, err)
	}
	return nil
}

// buildinfoPkg is where the linker stamps the build (github.com/lancecat/lancecat/internal/buildinfo).
const buildinfoPkg = "github.com/lancecat/lancecat/internal/buildinfo"

// Ldflags are the -X flags stamping version and src's commit and commit date (the Makefile's
// LDFLAGS); outside a git checkout the commit and date are left to the binary's own fallback.
func Ldflags(src, version string) string {
	flags := "-X " + buildinfoPkg + ".version=" + version
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", src}, args...)...)
		cmd.Env = append(os.Environ(), "TZ=UTC")
		b, err := cmd.Output()
		if err != nil {
			return ""
		}
		return string(bytes.TrimSpace(b))
	}
	if c := git("rev-parse", "HEAD"); c != "" {
		flags += " -X " + buildinfoPkg + ".commit=" + c
	}
	if d := git("log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ"); d != "" {
		flags += " -X " + buildinfoPkg + ".date=" + d
	}
	return flags
}

// epoch stamps every file and the config: the same inputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// Image assembles the one-layer image around a static binary.
func Image(bin, caCerts, goarch, version string) (v1.Image, error) {
	if err := checkStatic(bin); err != nil {
		return nil, err
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(caCerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	layerTar, err := rootfs(exe, ca)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created: v1.Time{Time: epoch}, CreatedBy: "lancecat deploy/image", Comment: "static lancecat, CA certificates, passwd/group",
	}})
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch
	if cf.Architecture == "" {
		cf.Architecture = hostArch()
	}
	cf.Created = v1.Time{Time: epoch}
	cf.Config = Config(version)
	return mutate.ConfigFile(img, cf)
}

// Config is the image's run configuration (the Dockerfile's USER, ENV, ENTRYPOINT, ... say the same).
func Config(version string) v1.Config {
	return v1.Config{
		User:       strconv.Itoa(UID) + ":" + strconv.Itoa(UID),
		Entrypoint: []string{"/" + BinaryPath},
		Cmd:        []string{"serve"},
		WorkingDir: "/" + DataDir,
		Env: []string{
			"PATH=/usr/local/bin",
			"SSL_CERT_FILE=/" + CAPath,
			// A container serves on every interface; the catalog lives in the /data volume.
			"LANCECAT_LISTEN=0.0.0.0:" + APIPort,
			"LANCECAT_ROOT=/" + DataDir,
		},
		ExposedPorts: map[string]struct{}{APIPort + "/tcp": {}, OpsPort + "/tcp": {}},
		Volumes:      map[string]struct{}{"/" + DataDir: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "lancecat",
			"org.opencontainers.image.description": "a governed Lance catalog (Lance Namespace REST)",
			"org.opencontainers.image.licenses":    "Apache-2.0",
			"org.opencontainers.image.source":      "https://github.com/lancecat/lancecat",
			"org.opencontainers.image.version":     version,
		},
	}
}

// Passwd and Group name root (file ownership only) and the user lancecat runs as; no login shell.
var (
	Passwd = fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/%s:/sbin/nologin\n", User, UID, UID, User, DataDir)
	Group  = fmt.Sprintf("root:x:0:\n%s:x:%d:\n", User, UID)
)

// rootfs is the layer's tar: directories first, parents before children.
func rootfs(exe, ca []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: epoch, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	steps := []error{
		dir("etc", 0o755, 0), dir("etc/ssl", 0o755, 0), dir("etc/ssl/certs", 0o755, 0),
		dir("usr", 0o755, 0), dir("usr/local", 0o755, 0), dir("usr/local/bin", 0o755, 0),
		dir(DataDir, 0o750, UID), dir("tmp", 0o1777, 0),
		file("etc/passwd", 0o644, []byte(Passwd)),
		file("etc/group", 0o644, []byte(Group)),
		file(CAPath, 0o644, ca),
		file(BinaryPath, 0o755, exe),
		tw.Close(),
	}
	if err := errors.Join(steps...); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// checkStatic refuses a dynamically linked binary: the image has no libc to run it.
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0)", bin)
		}
	}
	return nil
}

func hostArch() string { return runtime.GOARCH }
