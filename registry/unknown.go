package registry

// Forward compatibility of records. Replicas of two versions share one control root during a
// rolling upgrade, and every record is rewritten by read-modify-write (Mutate, or Read then Put).
// A record type embeds Extra: decoding keeps the top-level JSON fields this version does not know
// in it, and encoding writes them back, so an older replica's write (a protection flag, a claim)
// leaves a newer replica's fields (a project's deleting tombstone) as they were. One mechanism for
// every record type, in the store's encode and decode. Fields nested inside a known field (the
// binding a trash record carries) are not kept: a version that adds one there must accept losing
// it to an older replica's write.

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Extra holds the fields of a stored record this version does not know (by JSON name), kept
// from a read to the next write of the same value. Embed it in every record type.
type Extra struct {
	Unknown map[string]json.RawMessage `json:"-"`
}

func (e Extra) unknownFields() map[string]json.RawMessage { return e.Unknown }

func (e *Extra) setUnknownFields(m map[string]json.RawMessage) { e.Unknown = m }

type unknownKeeper interface {
	unknownFields() map[string]json.RawMessage
}

type unknownSetter interface {
	setUnknownFields(map[string]json.RawMessage)
}

// knownNames caches, per record type, the lower-cased JSON names it decodes (encoding/json matches
// names case-insensitively, so a key it decoded into a field is known whatever its case).
var knownNames sync.Map // reflect.Type → map[string]bool

func namesOf(t reflect.Type) map[string]bool {
	if v, ok := knownNames.Load(t); ok {
		return v.(map[string]bool)
	}
	names := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				walk(f.Type) // an embedded struct's fields are the record's own (Policy's settings)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			names[strings.ToLower(name)] = true
		}
	}
	walk(t)
	knownNames.Store(t, names)
	return names
}

// keepUnknown stores in rec (a pointer to a record that embeds Extra) the top-level fields of raw
// its type does not know; nil when there are none.
func keepUnknown(raw []byte, rec any) error {
	s, ok := rec.(unknownSetter)
	if !ok {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return err
	}
	known := namesOf(reflect.TypeOf(rec))
	var unknown map[string]json.RawMessage
	for k, v := range fields {
		if !known[strings.ToLower(k)] {
			if unknown == nil {
				unknown = map[string]json.RawMessage{}
			}
			unknown[k] = v
		}
	}
	s.setUnknownFields(unknown)
	return nil
}

// marshalRecord is rec's stored form: its JSON, with the fields it kept from the stored record it
// was read from (Extra) written back beside its own.
func marshalRecord(rec Record) ([]byte, error) {
	body, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	k, ok := rec.(unknownKeeper)
	if !ok || len(k.unknownFields()) == 0 {
		return body, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	for name, v := range k.unknownFields() {
		if _, own := fields[name]; !own {
			fields[name] = v
		}
	}
	return json.MarshalIndent(fields, "", "  ")
}
