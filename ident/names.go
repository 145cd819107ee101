package ident

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	nserr "github.com/lancecat/lancecat/errors"
)

// Kind is what a name names inside a table: an index, a tag or a branch. The three follow one
// rule (CheckName); only a branch may be hierarchical ("feature/x", Lance's tree/<name>/).
type Kind string

const (
	Index  Kind = "index"
	Tag    Kind = "tag"
	Branch Kind = "branch"
)

// MaxNameBytes bounds an index, tag or branch name: a tag becomes the file
// _refs/tags/<name>.json, and most filesystems refuse a path element longer than 255 bytes.
const MaxNameBytes = 255 - len(".json")

// reservedNames are the columns Lance adds to a scan or a search (lance-core's ROW_ID, ROW_ADDR,
// ROW_OFFSET, DIST_COL, SCORE_COL, the row version columns) and the name of the main branch: a
// name equal to one of them, in any case, would read as that column or branch wherever names
// and columns meet (a listing, an explain plan, a console page).
var reservedNames = []string{
	"_rowid", "_rowaddr", "_rowoffset", "_distance", "_score",
	"_row_created_at_version", "_row_last_updated_at_version", "main",
}

// CheckName is the one rule for the names of an index, a tag or a branch, applied where one is
// created (and where a name is looked up that does not exist, so a bad name never reaches
// storage). A name is refused when it is:
//
//   - empty, whitespace only, or with leading or trailing whitespace (two names that differ only
//     there would render the same);
//
//   - longer than MaxNameBytes, not valid UTF-8, or not in Unicode NFC;
//
//   - holding a control, format or line/paragraph separator character (NUL, \n, U+200B… as for
//     ids, see Validate);
//
//   - "." or "..", or holding "\" or "/" (for a branch, "/" separates its segments, as in Lance,
//     and no segment may be empty, "." or "..");
//
//   - a reserved name (reservedNames: _rowid, _rowaddr, _distance, _score…, main).
//
//   - holding a markup or quoting character (< > & " ' `) or an unassigned or private-use code
//     point: a name travels into places we do not render (webhook payloads, logs, other tools'
//     pages, shell lines), where escaping is someone else's to forget; every name an SDK
//     makes (<column>_idx) and every tag/branch name Lance accepts stays within the rule.
//
// Tags and branches are further held to Lance's own character set (letters, digits, '.', '-',
// '_'; lance.CheckTagName) where they become files.
//
// The error is a 400 code 13 naming the kind, the name (quoted, escaped, cut short) and the rule.
func CheckName(kind Kind, name string) error {
	if r := nameProblem(kind, name); r != "" {
		return nserr.InvalidInputf("%s name %s: %s", kind, QuoteName(name), r)
	}
	return nil
}

func nameProblem(kind Kind, name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > MaxNameBytes:
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.TrimFunc(name, unicode.IsSpace) == "":
		return "must not be only whitespace"
	case strings.TrimFunc(name, unicode.IsSpace) != name:
		return "must not begin or end with whitespace"
	}
	for _, r := range name {
		if invisible(r) {
			return fmt.Sprintf("must not contain control, format or separator characters (found %U)", r)
		}
	}
	if i := strings.IndexAny(name, "<>&\"'`"); i >= 0 {
		return fmt.Sprintf("must not contain markup or quoting characters (< > & \" ' `; found %q)", name[i])
	}
	for _, r := range name {
		if unicode.In(r, unicode.Co) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) {
			return fmt.Sprintf("must not contain unassigned or private-use code points (found %U)", r)
		}
	}
	if !norm.NFC.IsNormalString(name) {
		return "must be in Unicode normalization form NFC"
	}
	if strings.Contains(name, `\`) {
		return `must not contain "\"`
	}
	segments := []string{name}
	if kind == Branch {
		segments = strings.Split(name, "/")
	} else if strings.Contains(name, "/") {
		return `must not contain "/"`
	}
	for _, seg := range segments {
		switch seg {
		case "":
			return `must not begin or end with "/" or hold "//"`
		case ".", "..":
			return `must not be or hold a "." or ".." path element`
		}
	}
	for _, r := range reservedNames {
		if strings.EqualFold(name, r) {
			return fmt.Sprintf("is reserved (%s)", strings.Join(reservedNames, ", "))
		}
	}
	return ""
}

// QuoteName is a caller's name as an error shows it: quoted with Go escapes (a NUL is \x00, a
// newline \n) and cut short, so that it neither breaks the message nor floods it.
func QuoteName(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%+q…", s[:cut])
	}
	return fmt.Sprintf("%+q", s)
}
