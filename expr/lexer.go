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

// lexer reads src a token at a time, so a parser that stops early (at a limit, at an error) has
// not read the rest. Identifiers are quoted with backticks or double quotes (a doubled quote
// inside stands for itself); strings with single quotes (” is a quote). As in DataFusion's
// dialect, a backslash in a string literal is an ordinary character (LIKE gives it its escape
// meaning).
type lexer struct {
	src string
	i   int
}

// next is the next token; tEOF at the end (and again after).
func (l *lexer) next() (token, error) {
	src := l.src
	i := l.i
	defer func() { l.i = i }()
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
					return token{}, errorf(start, "", "unterminated string literal")
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
			return token{tString, b.String(), start}, nil
		case c == '`' || c == '"':
			start := i
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return token{}, errorf(start, "", "unterminated quoted identifier")
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
			return token{tQuotedIdent, b.String(), start}, nil
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
			return token{kind, src[start:i], start}, nil
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
			return token{tIdent, src[start:i], start}, nil
		default:
			start := i
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<=", ">=", "!=", "<>", "==", "||", "::":
				i += 2
				return token{tOp, two, start}, nil
			}
			switch c {
			case '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',', '.', '[', ']':
				i++
				return token{tOp, string(c), start}, nil
			default:
				r, _ := utf8.DecodeRuneInString(src[i:])
				return token{}, errorf(start, "", "unexpected character %q", r)
			}
		}
	}
	return token{tEOF, "", len(src)}, nil
}

func isIdentStart(src string, i int) bool {
	r, _ := utf8.DecodeRuneInString(src[i:])
	return r == '_' || unicode.IsLetter(r)
}
