package console

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
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
