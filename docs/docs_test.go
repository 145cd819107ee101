package docs

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
)

// The rule every fenced code block of README.md, CONTRIBUTING.md and docs/**/*.md follows: the line
// right before its opening fence is one of
//
//	<!-- snippet: PATH -->          the block is the file PATH byte for byte,
//	<!-- snippet: PATH#REGION -->   or the lines between "snippet-begin: REGION" and
//	                                "snippet-end: REGION" in it (each line holding a marker is left out);
//	<!-- not-run: KIND -->          text no test runs: KIND is output, config, shell or diagram.
//
// PATH is a file a test runs: a _test.go file (go test runs it), or a file under one of runners'
// folders, whose test is checked to exist. A block in a programming language (go, js, python, …) is
// always a snippet: only commands, configuration, output and drawings may go unrun. Every file under
// examples/ is quoted somewhere, so no example goes unexplained.
var (
	snippetMarker = regexp.MustCompile(`^<!-- snippet: ([^ #]+)(?:#([A-Za-z0-9_-]+))? -->\n$`)
	notRunMarker  = regexp.MustCompile(`^<!-- not-run: (output|config|shell|diagram) -->\n$`)
	programming   = map[string]bool{"go": true, "js": true, "javascript": true, "mjs": true, "ts": true, "typescript": true,
		"python": true, "py": true, "java": true, "scala": true, "rust": true}
)

// runners are the tests that run the files under each folder a snippet may quote from.
var runners = []struct{ folder, testFile, test string }{
	{"examples/quickstart/", "e2e/quickstart_test.go", "TestQuickstart"}, // the Python ones: e2e/python_clients_test.go TestPythonQuickstart
	{"scripts/e2e/spark/", "e2e/spark_test.go", "TestSpark"},
	{"examples/config/", "docs/docs_test.go", "TestConfigExamplesLoad"},
}

// TestDocsSnippets checks every fenced code block against the rule above.
func TestDocsSnippets(t *testing.T) {
	repo := repoRoot(t)
	for _, r := range runners {
		src, err := os.ReadFile(filepath.Join(repo, r.testFile))
		assert.NilError(t, err, "runner of %s", r.folder)
		assert.Check(t, bytes.Contains(src, []byte("func "+r.test+"(t *testing.T)")), "%s does not define %s, the runner of %s", r.testFile, r.test, r.folder)
	}
	quoted := map[string]bool{}
	for _, doc := range docFiles(t, repo) {
		src, root := parse(t, repo, doc)
		blocks := 0
		err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			b, ok := n.(*ast.FencedCodeBlock)
			if !entering || !ok {
				return ast.WalkContinue, nil
			}
			blocks++
			where := fmt.Sprintf("%s:%d", doc, lineOf(src, b))
			lang := string(b.Language(src))
			marker := ""
			if prev, ok := b.PreviousSibling().(*ast.HTMLBlock); ok && b.PreviousSibling() != nil {
				marker = lastLine(prev, src)
			}
			if m := notRunMarker.FindStringSubmatch(marker); m != nil {
				assert.Check(t, !programming[lang], "%s: a %s block marked not-run: code in a programming language must be a snippet of a file a test runs", where, lang)
				return ast.WalkContinue, nil
			}
			m := snippetMarker.FindStringSubmatch(marker)
			if m == nil {
				t.Errorf("%s: a code block with neither <!-- snippet: PATH --> nor <!-- not-run: output|config|shell|diagram --> on the line before it (docs/contributing.md, \"Docs\")", where)
				return ast.WalkContinue, nil
			}
			path, region := m[1], m[2]
			quoted[path] = true
			if !runByATest(path) {
				t.Errorf("%s: %s is run by no test this check knows: quote a _test.go file or a file under %v (add its folder and test to runners in docs/docs_test.go)", where, path, folders())
			}
			file, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(path)))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				return ast.WalkContinue, nil
			}
			want := string(file)
			if region != "" {
				if want, err = regionOf(want, region); err != nil {
					t.Errorf("%s: %s: %v", where, path, err)
					return ast.WalkContinue, nil
				}
			}
			assert.Check(t, content(b, src) == want, "%s: the block differs from %s: copy the file (region) into the doc byte for byte", where, m[0][len("<!-- snippet: "):len(m[0])-len(" -->\n")])
			return ast.WalkContinue, nil
		})
		assert.NilError(t, err)
		t.Logf("%s: %d code blocks", doc, blocks)
	}
	err := filepath.WalkDir(filepath.Join(repo, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		assert.Check(t, quoted[filepath.ToSlash(rel)], "%s is quoted by no doc: every example is shown where it is explained", rel)
		return nil
	})
	assert.NilError(t, err)
}

// TestDocsLinks checks every link of the docs: none points outside the repository (a scheme, an
// absolute path, or a path leaving the repository, such as ../shared, which a clone does not have),
// and each relative one names a file or folder that exists and, with #anchor, a heading of it.
func TestDocsLinks(t *testing.T) {
	repo := repoRoot(t)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(doc string) map[string]bool {
		if a, ok := anchors[doc]; ok {
			return a
		}
		src, root := parse(t, repo, doc)
		a := headingAnchors(root, src)
		anchors[doc] = a
		return a
	}
	links := 0
	for _, doc := range docFiles(t, repo) {
		src, root := parse(t, repo, doc)
		err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			var dest string
			switch l := n.(type) {
			case *ast.Link:
				dest = string(l.Destination)
			case *ast.Image:
				dest = string(l.Destination)
			case *ast.AutoLink:
				t.Errorf("%s: %q links outside the repository (write an address a reader types in a code span)", doc, l.URL(src))
				return ast.WalkContinue, nil
			default:
				return ast.WalkContinue, nil
			}
			links++
			if err := checkLink(repo, doc, dest, anchorsOf); err != nil {
				t.Errorf("%s: link %q: %v", doc, dest, err)
			}
			return ast.WalkContinue, nil
		})
		assert.NilError(t, err)
	}
	assert.Check(t, links > 0, "no links found: is the parser reading the docs?")
	t.Logf("%d links checked", links)
}

func checkLink(repo, doc, dest string, anchorsOf func(string) map[string]bool) error {
	if u, err := url.Parse(dest); err != nil {
		return err
	} else if u.Scheme != "" || u.Host != "" {
		return fmt.Errorf("points outside the repository: link to a file of the repository, or name the place in words")
	}
	path, anchor, _ := strings.Cut(dest, "#")
	path, err := url.PathUnescape(path)
	if err != nil {
		return err
	}
	target := doc
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return fmt.Errorf("an absolute path: make it relative to %s", doc)
		}
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), path)))
		if target == ".." || strings.HasPrefix(target, "../") {
			return fmt.Errorf("leaves the repository (a clone has nothing there)")
		}
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(target))); err != nil {
			return fmt.Errorf("no such file in the repository")
		}
	}
	if anchor == "" {
		return nil
	}
	if !strings.HasSuffix(target, ".md") {
		return fmt.Errorf("an anchor into %s, which is no Markdown page", target)
	}
	if !anchorsOf(target)[anchor] {
		return fmt.Errorf("%s has no heading whose anchor is #%s", target, anchor)
	}
	return nil
}

// headingAnchors are the anchors GitHub gives a page's headings: the text lower-cased, everything
// but letters, digits, marks, '_', '-' and spaces dropped, spaces made '-', repeats numbered -1, -2.
func headingAnchors(root ast.Node, src []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		for _, r := range strings.ToLower(plain(h, src)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
		return ast.WalkSkipChildren, nil
	})
	return anchors
}

// plain is the text of n's inline children, as a heading shows it.
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func runByATest(path string) bool {
	if strings.HasSuffix(path, "_test.go") {
		return true
	}
	for _, r := range runners {
		if strings.HasPrefix(path, r.folder) {
			return true
		}
	}
	return false
}

func folders() []string {
	var f []string
	for _, r := range runners {
		f = append(f, r.folder)
	}
	return f
}

// regionOf is the lines of src strictly between the line holding "snippet-begin: name" and the one
// holding "snippet-end: name"; each must be there exactly once.
func regionOf(src, name string) (string, error) {
	begin, end := "snippet-begin: "+name, "snippet-end: "+name
	if strings.Count(src, begin+"\n") != 1 || strings.Count(src, end+"\n") != 1 {
		return "", fmt.Errorf("want exactly one line ending in %q and one in %q", begin, end)
	}
	_, after, _ := strings.Cut(src, begin+"\n")
	body, _, _ := strings.Cut(after, end+"\n")
	// Drop the end marker's own line: everything after the last newline of body.
	i := strings.LastIndexByte(body, '\n')
	return body[:i+1], nil
}

func content(b *ast.FencedCodeBlock, src []byte) string {
	var s strings.Builder
	for i := 0; i < b.Lines().Len(); i++ {
		seg := b.Lines().At(i)
		s.Write(seg.Value(src))
	}
	return s.String()
}

func lastLine(h *ast.HTMLBlock, src []byte) string {
	n := h.Lines().Len()
	if n == 0 {
		return ""
	}
	last := h.Lines().At(n - 1)
	line := string(last.Value(src))
	if h.HasClosure() {
		cl := h.ClosureLine
		line = string(cl.Value(src))
	}
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	return line
}

func lineOf(src []byte, b *ast.FencedCodeBlock) int {
	if b.Lines().Len() > 0 {
		return bytes.Count(src[:b.Lines().At(0).Start], []byte("\n"))
	}
	if b.Info != nil {
		return bytes.Count(src[:b.Info.Segment.Start], []byte("\n")) + 1
	}
	return 0
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

func parse(t *testing.T, repo, doc string) ([]byte, ast.Node) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(doc)))
	assert.NilError(t, err)
	return src, md.Parser().Parse(text.NewReader(src))
}

// docFiles are the pages the rules hold for, relative to the repository, slash-separated.
func docFiles(t *testing.T, repo string) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repo, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	assert.NilError(t, err)
	sort.Strings(files[2:])
	return files
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// TestConfigurationNamesRealSettings: every setting the table of docs/configuration.md explains is
// a flag of `lancecat serve` (app.Config.BindFlags, what the generated reference lists), so a
// renamed or removed setting cannot linger in the prose.
func TestConfigurationNamesRealSettings(t *testing.T) {
	cfg := app.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.BindFlags(fs, func(string) (string, bool) { return "", false })
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "configuration.md"))
	assert.NilError(t, err)
	row := regexp.MustCompile("(?m)^\\| ((?:`--[a-z0-9-]+`(?:, )?)+) \\|")
	name := regexp.MustCompile("`--([a-z0-9-]+)`")
	rows := row.FindAllStringSubmatch(string(src), -1)
	assert.Assert(t, len(rows) > 20, "the settings table of docs/configuration.md was not found")
	for _, r := range rows {
		for _, n := range name.FindAllStringSubmatch(r[1], -1) {
			assert.Check(t, fs.Lookup(n[1]) != nil, "docs/configuration.md explains --%s, which lancecat serve does not have", n[1])
		}
	}
}

// TestDocsServeCommandsUseRealSettings: every `lancecat serve` command line in a code block of the
// docs (continuation lines joined) names only settings lancecat serve has, so a guide cannot
// teach a flag that was renamed or removed.
func TestDocsServeCommandsUseRealSettings(t *testing.T) {
	cfg := app.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.BindFlags(fs, func(string) (string, bool) { return "", false })
	known := func(name string) bool { return fs.Lookup(name) != nil || name == "print-config" || name == "help" }
	serve := regexp.MustCompile(`lancecat serve\b([^|&;#\n]*)`)
	flagName := regexp.MustCompile(`(?:^|\s)--([a-z0-9-]+)`)
	repo := repoRoot(t)
	commands := 0
	for _, doc := range docFiles(t, repo) {
		src, root := parse(t, repo, doc)
		err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			b, ok := n.(*ast.FencedCodeBlock)
			if !entering || !ok {
				return ast.WalkContinue, nil
			}
			text := strings.ReplaceAll(content(b, src), "\\\n", " ")
			for _, m := range serve.FindAllStringSubmatch(text, -1) {
				commands++
				for _, f := range flagName.FindAllStringSubmatch(m[1], -1) {
					assert.Check(t, known(f[1]), "%s:%d: lancecat serve --%s: no such setting (docs/reference/configuration.md lists them)", doc, lineOf(src, b), f[1])
				}
			}
			return ast.WalkContinue, nil
		})
		assert.NilError(t, err)
	}
	assert.Check(t, commands > 5, "only %d lancecat serve commands found in the docs", commands)
	t.Logf("%d lancecat serve commands checked", commands)
}

// TestConfigExamplesLoad reads every file of examples/config/ (the configuration files the docs
// show) as `lancecat serve --config FILE` does, and checks the result validates: a key the server
// does not know, a malformed value or a setting that cannot be right fails here, not in a reader's
// first start.
func TestConfigExamplesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "config", "*.yaml"))
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	noEnv := func(string) (string, bool) { return "", false }
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg := app.DefaultConfig()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			cfg.BindFlags(fs, noEnv)
			assert.NilError(t, app.ApplyConfigFile(fs, f, func(string) bool { return false }, noEnv))
			assert.Check(t, cfg.Root != app.DefaultConfig().Root, "the file set no root: is it read?")
			assert.NilError(t, cfg.Validate())
		})
	}
}
