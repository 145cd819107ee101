package wire

// Strict decoding of the spec doors' JSON bodies (issue 29 item 6): a field the operation does
// not know is a 400 code 13 that names it and the nearest known field, never silently dropped
// ({"predicat": "id > 2"} counted every row; a branch created with "version" instead of
// "from_version" started from the latest).
//
// "Known" is wider than what we act on, so that no client a catalog should serve is refused:
//
//   - the fields of the Go type the door decodes into (its generated request, or a handler's own
//     shape of it, such as the query body in both dialects);
//   - the fields of the generated request of the same spec model (nsapi, our pinned spec);
//   - extraFields: what the newest published spec (lance-namespace 0.13.0) and the LanceDB
//     clients send beyond our pin. These are accepted, some acted on, some ignored; the one
//     place that says which is extraFields below.
//
// Nested objects are checked the same way where the Go type is a struct of the spec (an
// explain_plan's "query", an alter_columns entry); a nested value the Go type holds as raw JSON
// or a map is left to its own decoder.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// ftsParams are Lance's full-text index parameters (lance-index InvertedIndexParams, whose
// serialized fields the LanceDB remote client merges into its create_index body: 0.31 sends the
// first thirteen, 0.39 adds block_size … split_on_numerics; the rest are Lance's other input
// names, which newer clients may send). Lance itself ignores unknown ones, because these
// parameters are persisted across Lance versions; we accept every name Lance knows and refuse
// others. We act on with_position … ascii_folding (the spec's own fields), custom_stop_words,
// min/max_ngram_length and prefix_only (handlers' create body); the rest are accepted and
// ignored (our FTS builder has no such knob).
var ftsParams = []string{
	"with_position", "base_tokenizer", "language", "max_token_length", "lower_case", "stem",
	"remove_stop_words", "ascii_folding", "custom_stop_words", "lance_tokenizer",
	"min_ngram_length", "max_ngram_length", "prefix_only",
	"block_size", "index_operators", "preserve_original", "split_identifiers", "split_on_numerics",
	"analyzer", "document_granularity", "json_tokenizer_mode", "disable_cross_array_unnest",
	"max_sub_docs_per_row", "max_sub_docs_per_row_exceed_action", "memory_limit",
	"worker_memory_limit_mb", "num_workers", "format_version",
}

// extraFields are the fields a spec model accepts beyond the Go types' own, by model name.
// Sources: lance-namespace-urllib3-client 0.13.0 (PyPI), each model's __properties, diffed
// against our pin (handlers/testdata/lance-namespace-0.13.0-requests.json holds them all, and
// TestSpecDecodeAcceptsNewestSpec sends every one to its door); the LanceDB remote client
// (rust/lancedb/src/remote/table.rs, 0.31.0 and 0.39.0; ../shared/reference/lancedb-remote-client.md).
var extraFields = map[string][]string{
	// 0.13.0, and the remote client since 0.23.1 (it sends nprobes too, with the same value).
	// Decoded by Query (probeBounds): the search's minimum and maximum partitions.
	"QueryTableRequest":            {"minimum_nprobes", "maximum_nprobes"},
	"AnalyzeTableQueryPlanRequest": {"minimum_nprobes", "maximum_nprobes"},
	// The remote client: metric_type is its name for distance_type (acted on), and the FTS
	// parameters above.
	"CreateTableIndexRequest": append([]string{"metric_type"}, ftsParams...),
}

// specModeler is a handler's own request shape that stands for a spec model (its fields are
// checked as that model's too).
type specModeler interface{ specModel() string }

// The query operations' body (query.go) in both dialects is QueryTableRequest; explain_plan's
// wraps it.
func (*Query) specModel() string   { return "QueryTableRequest" }
func (*Explain) specModel() string { return "ExplainTableQueryPlanRequest" }

// specModels are the generated request types by model name: a handler-local shape of a model
// accepts the generated type's fields as well.
var specModels = map[string]reflect.Type{
	"QueryTableRequest":            reflect.TypeFor[nsapi.QueryTableRequest](),
	"AnalyzeTableQueryPlanRequest": reflect.TypeFor[nsapi.AnalyzeTableQueryPlanRequest](),
	"ExplainTableQueryPlanRequest": reflect.TypeFor[nsapi.ExplainTableQueryPlanRequest](),
	"ListTableTagsRequest":         reflect.TypeFor[nsapi.ListTableTagsRequest](),
	"ListTableBranchesRequest":     reflect.TypeFor[nsapi.ListTableBranchesRequest](),
	"ListTableVersionsRequest":     reflect.TypeFor[nsapi.ListTableVersionsRequest](),
	"DropTableRequest":             reflect.TypeFor[nsapi.DropTableRequest](),
}

var nsapiPkg = reflect.TypeFor[nsapi.Identity]().PkgPath()

// Decode decodes a spec door's JSON body into req, refusing any field the operation does not
// know (400 code 13 naming it and the nearest known one). It tolerates the forms clients really
// send for "no body": nothing at all, or the literal `null` (req is left as it is). op is the
// operation, whose spec model (op + "Request") says what a shape shared by several operations
// may hold; "" takes the model from req's type.
func Decode(body []byte, req any, op string) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	return decodeSpecBody(trimmed, req, modelFor(req, op))
}

// decodeSpecBody decodes a spec door's JSON body (not empty, not null) into req, refusing any
// field the operation does not know. model names the spec model. It is the one strict decoder
// of the spec plane: a door that reads its body itself (merge_insert's JSON form, say) calls it
// with the bytes.
func decodeSpecBody(body []byte, req any, model string) error {
	t := reflect.TypeOf(req)
	if model == "" {
		model = modelOf(t)
	}
	if err := checkFields(body, t, model, ""); err != nil {
		return err
	}
	if err := json.Unmarshal(body, req); err != nil {
		return nserr.InvalidInputf("request body is not valid JSON for this operation: %s", JSONProblem(err))
	}
	return nil
}

// modelFor is the spec model a door's body stands for: its type's (modelOf), else the
// operation's request.
func modelFor(req any, op string) string {
	if model := modelOf(reflect.TypeOf(req)); model != "" || op == "" {
		return model
	}
	return op + "Request"
}

// KnownFields are the JSON fields a body decoded into req for the operation op may hold (Decode's
// op): what Decode accepts and nothing more.
func KnownFields(req any, op string) map[string]reflect.Type {
	t := reflect.TypeOf(req)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return knownFields(t, modelFor(req, op))
}

// JSONProblem is a decoding error as a client can act on it: the field and the type it must be.
func JSONProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if nserr.As(err, &typeErr) && typeErr.Field != "" {
		return "field " + typeErr.Field + " must be " + typeErr.Type.String() + ", not " + typeErr.Value
	}
	return err.Error()
}

// modelOf is the spec model a Go request type stands for: its own word (specModeler), its name
// when it is a generated request, or that of the generated request it embeds.
func modelOf(t reflect.Type) string {
	if t.Implements(reflect.TypeFor[specModeler]()) {
		return reflect.New(t.Elem()).Interface().(specModeler).specModel()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	if t.PkgPath() == nsapiPkg {
		return t.Name()
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Type.PkgPath() == nsapiPkg {
			return f.Type.Name()
		}
	}
	return ""
}

// checkFields refuses a field of the JSON object raw that t (a struct, through pointers) and its
// model do not know, and checks the nested objects of spec structs the same way. Anything that
// is not an object, or a type that decodes itself, is left to json.Unmarshal.
func checkFields(raw []byte, t reflect.Type, model, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil // not an object: json.Unmarshal says what is wrong with it
	}
	fields := knownFields(t, model)
	if err := RefuseUnknown(obj, fields, path); err != nil {
		return err
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if ft := fields[k]; ft != nil {
			if err := checkNested(obj[k], ft, path+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// knownFields are the JSON fields a body of struct type t standing for model may hold, with
// their Go types (nil for the extraFields no Go type holds).
func knownFields(t reflect.Type, model string) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	GoFields(t, fields)
	if m, ok := specModels[model]; ok {
		GoFields(m, fields)
	}
	for _, f := range extraFields[model] {
		if _, ok := fields[f]; !ok {
			fields[f] = nil
		}
	}
	return fields
}

// RefuseUnknown is the one check of both planes (the control plane's decodeStrict, checkFields):
// the first field of obj, in order, that fields does not hold (exactly: another case is another
// field) is a 400.
func RefuseUnknown(obj map[string]json.RawMessage, fields map[string]reflect.Type, path string) error {
	var unknown []string
	for k := range obj {
		if _, ok := fields[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return unknownField(path+unknown[0], unknown[0], fields)
}

// checkNested checks a field's value where its Go type is (a pointer to, or a slice or map of) a
// struct of the spec.
func checkNested(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.PkgPath() != nsapiPkg && !reflect.PointerTo(t).Implements(reflect.TypeFor[specModeler]()) {
			return nil
		}
		return checkFields(raw, t, modelOf(reflect.PointerTo(t)), path+".")
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := checkNested(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var entries map[string]json.RawMessage
		if t.Key().Kind() != reflect.String || json.Unmarshal(raw, &entries) != nil {
			return nil
		}
		keys := make([]string, 0, len(entries))
		for k := range entries {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := checkNested(entries[k], t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// GoFields adds a struct's JSON field names and Go types to fields, through embedded structs
// (whose fields are promoted, as encoding/json promotes them).
func GoFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				GoFields(et, fields)
				continue
			}
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := fields[name]; !ok {
			fields[name] = f.Type
		}
	}
}

// unknownField is the 400 for a field the operation does not know: it names the field (at its
// path in the body), the known field nearest to it, and all of them.
func unknownField(path, name string, fields map[string]reflect.Type) error {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	msg := "unknown field " + quote(path)
	if len(name) > 64 {
		msg = "unknown field " + quote(name)
	}
	if near := nearest(name, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return nserr.InvalidInputf("%s; this operation's fields are %s", msg, strings.Join(known, ", "))
}

// nearest is the known name closest to name, if it is close enough to be a misspelling: by
// edit distance (case-insensitive: "Predicate" suggests "predicate"), at most half the longer
// name's letters differing (a transposition is two); else a known name holding it whole or held by it
// ("version" suggests "from_version"). Ties go to the first in order.
func nearest(name string, known []string) string {
	if len(name) > 64 || len(name) < 2 {
		return "" // no misspelling is that long (and edit distance is quadratic)
	}
	lower := strings.ToLower(name)
	best, bestD := "", -1
	for _, k := range known {
		d := levenshtein.ComputeDistance(lower, strings.ToLower(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD >= 0 && bestD*2 <= max(len(name), len(best)) {
		return best
	}
	for _, k := range known {
		lk := strings.ToLower(k)
		if len(lk) >= 3 && len(lower) >= 3 && (strings.Contains(lk, lower) || strings.Contains(lower, lk)) {
			return k
		}
	}
	return ""
}

// quote is a field name as an error shows it: quoted, control characters escaped, and cut short
// (the name is the caller's, of any length).
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
