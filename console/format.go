package console

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"
)

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func derefInt[T ~int | ~int32 | ~int64](p *T) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// derefAny is deref for templates (which cannot call generic functions): a nil pointer is its
// type's zero value.
func derefAny(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return v
	}
	if rv.IsNil() {
		return reflect.Zero(rv.Type().Elem()).Interface()
	}
	return rv.Elem().Interface()
}

// humanBytes is a size for people (binary units).
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func formatMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.DateTime)
}

// percent is part of whole, for coverage ("—" when there is nothing to cover).
func percent(part, whole int64) string {
	if whole <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

func writeJSONTo(w io.Writer, v any) {
	_ = json.NewEncoder(w).Encode(v)
}

// taskSummary is a task's result in a line: a maintenance report as its steps ("compact done:
// fragments 2→1, 10 rows rewritten"), anything else as its keys in order.
func taskSummary(result *map[string]any) string {
	if result == nil {
		return ""
	}
	m := *result
	if steps, ok := m["steps"].([]any); ok {
		var parts []string
		for _, s := range steps {
			st, ok := s.(map[string]any)
			if !ok {
				continue
			}
			p := fmt.Sprintf("%v %v", st["step"], st["status"])
			var facts []string
			if b, ok := st["fragments_before"]; ok {
				facts = append(facts, fmt.Sprintf("fragments %v→%v", b, st["fragments_after"]))
			}
			if r, ok := st["rows_rewritten"]; ok {
				facts = append(facts, fmt.Sprintf("%v rows rewritten", r))
			}
			if r, ok := st["versions_removed"]; ok {
				facts = append(facts, fmt.Sprintf("%v versions removed", r))
			}
			if r, ok := st["reason"]; ok {
				facts = append(facts, fmt.Sprint(r))
			}
			if len(facts) > 0 {
				p += ": " + strings.Join(facts, ", ")
			}
			parts = append(parts, p)
		}
		if v, ok := m["version"]; ok {
			parts = append(parts, fmt.Sprintf("→ v%v", v))
		}
		return strings.Join(parts, "; ")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, " ")
}
