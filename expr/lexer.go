package expr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	text string // identifiers as written; strings unquoted; operators as written
	pos  int
}

// lex splits src into tokens. Identifiers are quoted with backticks or double quotes (a doubled quote
// inside stands for itself); strings with single quotes (” is a quote). As in DataFusion's dialect,
// a backslash in a string literal is an ordinary character (LIKE gives it its escape meaning).
func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-': // comment to end of line
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'':
			start := i
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, errorf(start, "", "unterminated string literal")
				}
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						b.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			out = append(out, token{tString, b.String(), start})
		case c == '`' || c == '"':
			start := i
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, errorf(start, "", "unterminated quoted identifier")
				}
				if src[i] == c {
					if i+1 < len(src) && src[i+1] == c {
						b.WriteByte(c)
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			out = append(out, token{tQuotedIdent, b.String(), start})
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			kind := tInt
			for i < len(src) && src[i] >= '0' && src[i] <= '9' {
				i++
			}
			if i < len(src) && src[i] == '.' {
				kind = tFloat
				i++
				for i < len(src) && src[i] >= '0' && src[i] <= '9' {
					i++
				}
			}
			if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < len(src) && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < len(src) && src[j] >= '0' && src[j] <= '9' {
					kind = tFloat
					i = j
					for i < len(src) && src[i] >= '0' && src[i] <= '9' {
						i++
					}
				}
			}
			out = append(out, token{kind, src[start:i], start})
		case isIdentStart(src, i):
			start := i
			for i < len(src) {
				r, n := utf8.DecodeRuneInString(src[i:])
				if r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					i += n
					continue
				}
				break
			}
			out = append(out, token{tIdent, src[start:i], start})
		default:
			start := i
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<=", ">=", "!=", "<>", "==", "||", "::":
				out = append(out, token{tOp, two, start})
				i += 2
				continue
			}
			switch c {
			case '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',', '.', '[', ']':
				out = append(out, token{tOp, string(c), start})
				i++
			default:
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, errorf(start, "", "unexpected character %q", r)
			}
		}
	}
	out = append(out, token{tEOF, "", len(src)})
	return out, nil
}

func isIdentStart(src string, i int) bool {
	r, _ := utf8.DecodeRuneInString(src[i:])
	return r == '_' || unicode.IsLetter(r)
}
