package app

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The configuration file is the third source of settings, under the environment and the command
// line: flag > LANCECAT_* variable > file > default, one rule for every setting. Its keys are the
// flag names, so the file, the flags and --print-config read alike; a nested mapping joins its
// keys with "-" (`tls: {cert-file: x}` is tls-cert-file) and a list of scalars is the
// comma-separated value the flag takes. An unknown key or a malformed value is refused with the
// file and line, never ignored: a typo in a catalog's configuration must not silently fall back
// to the default (the maintenance sweep off, authorization off).
//
// The file is parsed with go.yaml.in/yaml/v3 (the YAML organisation's maintained yaml.v3), whose
// nodes carry line numbers for those errors.

// ConfigFlag names the file; it is itself a flag and a variable (LANCECAT_CONFIG), never a key.
const ConfigFlag = "config"

// maxConfigFileBytes bounds the file read: a configuration is a few kilobytes.
const maxConfigFileBytes = 1 << 20

// secretSettings are the settings --print-config masks: keys, tokens and secrets. A test checks
// that every setting whose name says secret, token, password or key-but-not-an-id is here.
var secretSettings = map[string]bool{
	"s3-secret-key":              true,
	"openfga-token":              true,
	"console-oidc-client-secret": true,
	"vend-sts-secret-key":        true,
	"webhook-secret":             true,
}

// Masked is what --print-config shows for a secret that is set.
const Masked = "********"

// envName is the LANCECAT_* variable of a flag (every setting follows it; a test checks).
func envName(flagName string) string {
	return "LANCECAT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ApplyConfigFile reads the YAML file at path and sets, on fs, every setting it names that the
// command line did not set (changed reports those) and the environment does not hold. It is
// called after the command line is parsed.
func ApplyConfigFile(fs *flag.FlagSet, path string, changed func(name string) bool, env envLookup) error {
	if env == nil {
		env = os.LookupEnv
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigFileBytes+1))
	if err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	if len(raw) > maxConfigFileBytes {
		return fmt.Errorf("--config %s: larger than %d bytes", path, maxConfigFileBytes)
	}
	settings, err := parseConfigFile(raw)
	if err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	for _, s := range settings {
		fl := fs.Lookup(s.name)
		if fl == nil || s.name == ConfigFlag {
			return fmt.Errorf("--config %s:%d: unknown setting %q%s", path, s.line, s.name, suggestSetting(fs, s.name))
		}
		if changed(s.name) {
			continue
		}
		if _, ok := env(envName(s.name)); ok {
			continue
		}
		if secretSettings[s.name] && s.value == Masked {
			// A --print-config output reused as the file: the secret is not in it.
			return fmt.Errorf("--config %s:%d: %s holds the mask --print-config prints, not the secret: set it in the environment (%s) or its -file setting",
				path, s.line, s.name, envName(s.name))
		}
		if err := fl.Value.Set(s.value); err != nil {
			return fmt.Errorf("--config %s:%d: %s: %w", path, s.line, s.name, err)
		}
	}
	return nil
}

// fileSetting is one key of the file, flattened.
type fileSetting struct {
	name, value string
	line        int
}

// parseConfigFile flattens the file's mapping into settings in file order; a key given twice
// (directly or through nesting) is refused.
func parseConfigFile(raw []byte) ([]fileSetting, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty file sets nothing
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("one YAML document expected, found more")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the file must be a mapping of setting names to values", root.Line)
	}
	var out []fileSetting
	seen := map[string]int{}
	var walk func(prefix string, m *yaml.Node) error
	walk = func(prefix string, m *yaml.Node) error {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "" {
				return fmt.Errorf("line %d: a setting name must be a non-empty string", k.Line)
			}
			name := k.Value
			if prefix != "" {
				name = prefix + "-" + name
			}
			switch v.Kind {
			case yaml.MappingNode:
				if err := walk(name, v); err != nil {
					return err
				}
				continue
			case yaml.SequenceNode:
				items := make([]string, len(v.Content))
				for j, it := range v.Content {
					if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
						return fmt.Errorf("line %d: %s: a list holds plain values without commas", it.Line, name)
					}
					items[j] = it.Value
				}
				out = append(out, fileSetting{name: name, value: strings.Join(items, ","), line: v.Line})
			case yaml.ScalarNode:
				val := v.Value
				if v.Tag == "!!null" {
					val = ""
				}
				out = append(out, fileSetting{name: name, value: val, line: v.Line})
			default:
				return fmt.Errorf("line %d: %s: want a value, a list or a mapping", v.Line, name)
			}
			if first, dup := seen[name]; dup {
				return fmt.Errorf("line %d: %s is already set on line %d", v.Line, name, first)
			}
			seen[name] = v.Line
		}
		return nil
	}
	if err := walk("", root); err != nil {
		return nil, err
	}
	return out, nil
}

// suggestSetting names the closest setting to a misspelt one (edit distance at most 3).
func suggestSetting(fs *flag.FlagSet, name string) string {
	best, bestD := "", 4
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == ConfigFlag {
			return
		}
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of two short ASCII names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// PrintConfig writes the effective configuration — every setting of fs with its value after
// flags, environment and file — as a YAML file of the same form, sorted by name, secrets masked.
// Read back with --config it gives the same configuration (but for the masked secrets).
func PrintConfig(w io.Writer, fs *flag.FlagSet) error {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != ConfigFlag {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, n := range names {
		v := fs.Lookup(n).Value.String()
		if secretSettings[n] && v != "" {
			v = Masked
		}
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: n},
			&yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: styleOf(v)})
	}
	if _, err := fmt.Fprintln(w, "# lancecat serve: the effective configuration (flag > LANCECAT_* > --config file > default); secrets masked"); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return enc.Close()
}

// styleOf quotes a value YAML would read as null (empty, "~", "null"), so the printed file reads
// back as the same string; the encoder quotes whatever else plain style cannot hold.
func styleOf(v string) yaml.Style {
	var probe any
	if err := yaml.Unmarshal([]byte(v), &probe); err != nil || probe == nil {
		return yaml.DoubleQuotedStyle
	}
	return 0
}
