package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
)

// TestQuickstart runs the quickstart as a new user would, so it cannot rot (issue 19): every
// snippet is a file under examples/quickstart/, the docs' fenced copy of it (README.md, and
// docs/clients.md and docs/governance.md for the Go and governed ones) must equal the file byte for byte, and each file runs against a `lancecat serve` built from this tree, started
// as `make serve` starts it (no flags but the port), its output checked.
//
// What the test changes in a snippet before running it, and only this: the port (2333 → a free
// one), and for the governed setup the OpenFGA address (the test's); the governed server also gets
// LANCECAT_LISTEN and a store of its own (LANCECAT_OPENFGA_STORE: the test OpenFGA is shared by
// every package's tests) through its environment.
func TestQuickstart(t *testing.T) {
	repo := repoRoot(t)
	snippets := docSnippets(t, repo)
	bin := lancecatBinary(t)

	t.Run("node-curl-go", func(t *testing.T) {
		dirs := testenv.SDKs(t)
		goclient := buildBinary(t, repo, "./examples/quickstart/goclient", "goclient")
		for _, dir := range dirs {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				work := t.TempDir()
				port := serveAsMakeServe(t, bin, work)
				assert.NilError(t, os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(work, "node_modules")))

				out := runSnippet(t, work, port, snippets["examples/quickstart/namespace.mjs"], "namespace.mjs", "node")
				assert.Check(t, is.Contains(out, "tables: items\n"))
				assert.Check(t, is.Contains(out, "rows: 4\n"))
				assert.Check(t, is.Contains(out, "nearest: apple\n"))

				out = runSnippet(t, work, port, snippets["examples/quickstart/remote.mjs"], "remote.mjs", "node")
				assert.Check(t, is.Contains(out, "rows: 2\n"))
				assert.Check(t, is.Contains(out, "qty > 1: pear=2,plum=7\n"))

				// curl reads what the namespace-mode snippet made.
				out = runSnippet(t, work, port, snippets["examples/quickstart/curl.sh"], "curl.sh", "bash", "-e")
				assert.Check(t, is.Contains(out, `{"namespaces":["shop"]}`))
				assert.Check(t, is.Contains(out, `{"tables":["items"]}`))
				assert.Check(t, is.Contains(out, "\n2\n"), "count_rows with id > 2")
				assert.Check(t, is.Contains(out, `"code":4`))
				assert.DeepEqual(t, arrowNames(t, filepath.Join(work, "pear.arrow")), []string{"pear"})

				cmd := exec.Command(goclient)
				cmd.Env = append(os.Environ(), fmt.Sprintf("LANCECAT_URL=http://127.0.0.1:%d", port))
				b, err := cmd.CombinedOutput()
				assert.NilError(t, err, "%s", b)
				assert.Equal(t, string(b), "tables in shop: [items]\nrows with id > 2: 2\nshop$missing: code 4 - table 'shop$missing' not found\n")
			})
		}
	})

	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed")
		}
		for _, name := range []string{"namespace.py", "remote.py"} {
			src := filepath.Join(t.TempDir(), name)
			assert.NilError(t, os.WriteFile(src, []byte(snippets["examples/quickstart/"+name]), 0o644))
			b, err := exec.Command(py, "-c", "import py_compile,sys; py_compile.compile(sys.argv[1], cfile=sys.argv[1]+'c', doraise=True)", src).CombinedOutput()
			assert.NilError(t, err, "%s does not compile: %s", name, b)
		}
		// TestPythonQuickstart runs them with the pinned lancedb (scripts/python/versions.txt).
	})

	t.Run("governed", func(t *testing.T) {
		fga := testenv.OpenFGA(t)
		work := t.TempDir()
		port := freePort(t)
		var b [6]byte
		_, _ = rand.Read(b[:])
		src := snippets["examples/quickstart/governed.sh"]
		src = strings.ReplaceAll(src, "http://127.0.0.1:8080", fga)
		src = strings.ReplaceAll(src, "127.0.0.1:2333", fmt.Sprintf("127.0.0.1:%d", port))
		assert.NilError(t, os.WriteFile(filepath.Join(work, "governed.sh"), []byte(src), 0o644))

		// The script leaves `lancecat serve` running in the background (as a user would): run it in
		// a process group of its own, its output to a file (a pipe would stay open while the server
		// runs), and stop the whole group when it is done.
		logPath := filepath.Join(work, "out.log")
		logf, err := os.Create(logPath)
		assert.NilError(t, err)
		cmd := exec.Command("bash", "-e", "governed.sh")
		cmd.Dir = work
		// The server listens where the rewritten snippet looks for it, and keeps its tuples in a
		// store of its own: both through lancecat's environment settings, not the snippet's text.
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
			fmt.Sprintf("LANCECAT_LISTEN=127.0.0.1:%d", port), "LANCECAT_OPENFGA_STORE=quickstart-"+hex.EncodeToString(b[:]))
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		assert.NilError(t, cmd.Start())
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) })
		timer := time.AfterFunc(3*time.Minute, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		err = cmd.Wait()
		timer.Stop()
		_ = logf.Close()
		out, _ := os.ReadFile(logPath)
		assert.NilError(t, err, "%s", out)
		for _, want := range []string{
			`"id":"analytics"`,
			`"id":"lake"`,
			`{"namespace":"sales"`,
			`{"object_id":"sales","object_type":"namespace","relation":"reader","subject":"user:bob"}`,
		} {
			assert.Check(t, is.Contains(string(out), want))
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		assert.Check(t, is.Contains(lines, `{"namespaces":["sales"]}`), "bob's listing is the last answer:\n%s", out)
	})
}

// docSnippets reads every `<!-- snippet: examples/quickstart/… -->` fenced block of README.md and
// docs/**/*.md (the quickstart is in the README, the rest of its files on the clients and
// governance pages), checks that it equals the file and that every file under examples/quickstart/
// is shown somewhere, and returns the files' contents by path. (docs.TestDocsSnippets checks every
// other snippet of the docs the same way.)
func docSnippets(t *testing.T, repo string) map[string]string {
	t.Helper()
	pages := []string{filepath.Join(repo, "README.md")}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	assert.NilError(t, err)
	re := regexp.MustCompile("(?s)<!-- snippet: (examples/quickstart/[^ #]+) -->\n```[a-z]*\n(.*?)```\n")
	got := map[string]string{}
	for _, page := range pages {
		doc, err := os.ReadFile(page)
		assert.NilError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
			file, err := os.ReadFile(filepath.Join(repo, m[1]))
			assert.NilError(t, err, "%s names %s", page, m[1])
			assert.Equal(t, m[2], string(file), "%s's copy of %s differs from the file: copy the file into the page", page, m[1])
			got[m[1]] = string(file)
		}
	}
	err = filepath.WalkDir(filepath.Join(repo, "examples", "quickstart"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		_, ok := got[filepath.ToSlash(rel)]
		assert.Check(t, ok, "%s is shown on no page of the docs", rel)
		return nil
	})
	assert.NilError(t, err)
	return got
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// buildBinary builds a main package of this module into a temporary directory.
func buildBinary(t *testing.T, repo, pkg, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = repo
	b, err := cmd.CombinedOutput()
	assert.NilError(t, err, "go build %s: %s", pkg, b)
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serveAsMakeServe runs `lancecat serve` in dir as `make serve` does (defaults: ./lancecat-data,
// authorization off), on a free port instead of 2333, until the test ends.
func serveAsMakeServe(t *testing.T, bin, dir string) int {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "warn")
	cmd.Dir = dir
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	assert.NilError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("lancecat serve exited (%v): %s", err, logs.String())
		default:
		}
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return port
			}
		}
	}
	t.Fatalf("lancecat serve not ready after 60s: %s", logs.String())
	return 0
}

// runSnippet writes src (its port rewritten) into dir as name and runs it there with argv,
// failing the test on a non-zero exit; it returns the combined output.
func runSnippet(t *testing.T, dir string, port int, src, name string, argv ...string) string {
	t.Helper()
	src = strings.ReplaceAll(src, "127.0.0.1:2333", fmt.Sprintf("127.0.0.1:%d", port))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], name)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RUST_LOG=error", "LANCEDB_LOG=error")
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", name, b)
	assert.NilError(t, err, "%s failed", name)
	return string(b)
}

// arrowNames reads the `name` column of an Arrow IPC file.
func arrowNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	assert.NilError(t, err)
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	assert.NilError(t, err, "the query answer is an Arrow IPC file")
	defer r.Close()
	var names []string
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		assert.NilError(t, err)
		idx := rec.Schema().FieldIndices("name")
		assert.Assert(t, len(idx) == 1, "a name column")
		col := rec.Column(idx[0]).(*array.String)
		for j := 0; j < col.Len(); j++ {
			names = append(names, col.Value(j))
		}
	}
	return names
}
