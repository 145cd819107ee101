package authz

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
)

// The grants are the one part of a catalog's state that is not in the object store (tables,
// governance records, API keys and the events journal all are): they live in OpenFGA's datastore.
// Backup writes every tuple of the store to a file, Restore writes such a file into a store —
// a fresh one after losing OpenFGA's database, or another deployment's.
//
// The file is JSON Lines, so neither side holds the store in memory: a header line, one line per
// tuple, and a trailer line with the count. A file without its trailer (a backup cut short, a
// truncated copy) is refused, as is anything after it.
//
// A backup reads the store page by page: it is not a snapshot of one instant. A grant made or
// revoked while it runs may or may not be in it; take it while the catalog is quiet (read-only
// mode) when that matters. Restore is idempotent (a tuple already stored counts as restored), so
// running it twice, or after a partial run, converges.

// BackupKind and BackupFormat identify a grants backup file.
const (
	BackupKind   = "openfga-tuples"
	BackupFormat = 1
)

// maxBackupLine bounds one line of a backup file: a tuple is three short strings.
const maxBackupLine = 64 << 10

// BackupHeader is the first line of a backup file.
type BackupHeader struct {
	Kind    string    `json:"lancecat_backup"`
	Format  int       `json:"format"`
	StoreID string    `json:"store_id"`
	ModelID string    `json:"model_id"`
	Created time.Time `json:"created"`
}

// backupTuple is one tuple line.
type backupTuple struct {
	User     string `json:"user"`
	Relation string `json:"relation"`
	Object   string `json:"object"`
}

// backupTrailer is the last line.
type backupTrailer struct {
	End    bool `json:"end"`
	Tuples int  `json:"tuples"`
}

// Backup writes every tuple of the store to w and answers how many.
func (f *OpenFGA) Backup(ctx context.Context, w io.Writer) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(BackupHeader{Kind: BackupKind, Format: BackupFormat, StoreID: f.store.ID,
		ModelID: f.store.ModelID, Created: time.Now().UTC()}); err != nil {
		return 0, err
	}
	n, token := 0, ""
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		page, next, err := f.ReadTuples(ctx, token)
		if err != nil {
			return n, err
		}
		for _, t := range page {
			if err := enc.Encode(backupTuple(t)); err != nil {
				return n, err
			}
			n++
		}
		if next == "" {
			break
		}
		token = next
	}
	if err := enc.Encode(backupTrailer{End: true, Tuples: n}); err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// ReadBackup checks a whole backup file without writing anything: its header, every tuple
// against the model (a type, relation or subject form the model does not have is refused with its
// line), and the trailer. It answers the header and the tuple count.
func ReadBackup(r io.Reader) (BackupHeader, int, error) {
	return scanBackup(r, nil)
}

// Restore writes the tuples of a backup file into the store, in writes of at most
// maxTuplesPerWrite tuples, each idempotent. A bad line stops it with the line named; what was
// written before stays written (check with ReadBackup first to write nothing from a bad file).
// It answers the tuple count.
func (f *OpenFGA) Restore(ctx context.Context, r io.Reader) (int, error) {
	batch := make([]Tuple, 0, maxTuplesPerWrite)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := f.writeTuples(ctx, batch, fmt.Sprintf("restoring %d tuples", len(batch)))
		batch = batch[:0]
		return err
	}
	_, n, err := scanBackup(r, func(t Tuple) error {
		batch = append(batch, t)
		if len(batch) == maxTuplesPerWrite {
			return flush()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, flush()
}

// scanBackup reads a backup file line by line, checking each, and hands every tuple to each
// (nil: check only). The trailer's count must match.
func scanBackup(r io.Reader, each func(Tuple) error) (BackupHeader, int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxBackupLine)
	line := 0
	next := func() ([]byte, bool) {
		if !sc.Scan() {
			return nil, false
		}
		line++
		return sc.Bytes(), true
	}
	bad := func(format string, args ...any) error {
		return nserr.InvalidInputf("backup line %d: %s", line, fmt.Sprintf(format, args...))
	}
	var h BackupHeader
	raw, ok := next()
	if !ok {
		return h, 0, scanErr(sc.Err(), "the file is empty")
	}
	if err := strictJSON(raw, &h); err != nil || h.Kind != BackupKind {
		return h, 0, bad("not a lancecat grants backup (want a header with \"lancecat_backup\": %q)", BackupKind)
	}
	if h.Format != BackupFormat {
		return h, 0, bad("backup format %d; this lancecat reads format %d", h.Format, BackupFormat)
	}
	n := 0
	for {
		raw, ok := next()
		if !ok {
			return h, n, scanErr(sc.Err(), fmt.Sprintf("the file ends after %d tuples without its trailer: the backup is incomplete", n))
		}
		if strings.Contains(string(raw), `"end"`) {
			var tr backupTrailer
			if err := strictJSON(raw, &tr); err == nil && tr.End {
				if tr.Tuples != n {
					return h, n, bad("the trailer counts %d tuples, the file holds %d", tr.Tuples, n)
				}
				if _, more := next(); more {
					return h, n, bad("data after the trailer")
				}
				return h, n, scanErr(sc.Err(), "")
			}
		}
		var bt backupTuple
		if err := strictJSON(raw, &bt); err != nil {
			return h, n, bad("%v", err)
		}
		t := Tuple(bt)
		if err := checkTuple(t); err != nil {
			return h, n, bad("%s: %v", t, err)
		}
		n++
		if each != nil {
			if err := each(t); err != nil {
				return h, n, err
			}
		}
	}
}

// scanErr is the scanner's error, else (when why is set) the file's shortfall.
func scanErr(err error, why string) error {
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return nserr.InvalidInputf("backup: a line is longer than %d bytes", maxBackupLine)
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	case why != "":
		return nserr.InvalidInputf("backup: %s", why)
	}
	return nil
}

// strictJSON decodes one JSON object, refusing unknown fields and trailing data.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// checkTuple: the object is a known type's, the relation is one of that type, and the user is a
// form the model lets that relation name ("user", "user:*", "team#member", "namespace", ...).
func checkTuple(t Tuple) error {
	if strings.Contains(t.Object, "#") {
		return errors.New("the object names a relation")
	}
	obj, ok := ParseObject(t.Object)
	if !ok {
		return fmt.Errorf("object %q is no object of the model", t.Object)
	}
	if !theModel.relations[obj.Type][t.Relation] {
		return fmt.Errorf("a %s has no relation %q", obj.Type, t.Relation)
	}
	form, err := userForm(t.User)
	if err != nil {
		return err
	}
	if !slices.Contains(theModel.subjects[obj.Type][t.Relation], form) {
		return fmt.Errorf("%q on a %s cannot name %q", t.Relation, obj.Type, t.User)
	}
	return nil
}

// userForm is the model's form of a tuple's user: "user", "user:*" or "team#member".
func userForm(user string) (string, error) {
	base, rel, userset := strings.Cut(user, "#")
	typ, id, ok := strings.Cut(base, ":")
	if !ok || typ == "" || id == "" {
		return "", fmt.Errorf("user %q is not type:id", user)
	}
	if _, known := theModel.relations[typ]; !known {
		return "", fmt.Errorf("user %q has an unknown type", user)
	}
	switch {
	case userset:
		if !theModel.relations[typ][rel] {
			return "", fmt.Errorf("user %q names no relation of a %s", user, typ)
		}
		return typ + "#" + rel, nil
	case id == "*":
		return typ + ":*", nil
	}
	if _, ok := ParseObject(base); !ok {
		return "", fmt.Errorf("user %q is malformed", user)
	}
	return typ, nil
}
