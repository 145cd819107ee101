package expr

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// funcNode is a function call; fn gets the evaluated arguments (all ec.n rows long).
type funcNode struct {
	name string
	args []node
	out  arrow.DataType
	fn   func(ec *evalCtx, args []arrow.Array) (arrow.Array, error)
}

func (n *funcNode) typ() arrow.DataType { return n.out }
func (n *funcNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	args := make([]arrow.Array, len(n.args))
	defer func() {
		for _, a := range args {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, a := range n.args {
		v, err := a.eval(ec)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return n.fn(ec, args)
}

// strs reads a string-like array; NULL-typed arrays read as all NULL.
type strs interface {
	IsNull(i int) bool
	Value(i int) string
}

type nullStrs struct{}

func (nullStrs) IsNull(int) bool  { return true }
func (nullStrs) Value(int) string { return "" }
func asStrs(a arrow.Array) strs {
	if s, ok := a.(strs); ok && isString(a.DataType()) {
		return s
	}
	return nullStrs{}
}

// The string functions below are loops over the strings: arrow-go has no string kernels.

func mapStrings(ec *evalCtx, x arrow.Array, f func(string) string) (arrow.Array, error) {
	s := asStrs(x)
	bl := array.NewStringBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if s.IsNull(i) {
			bl.AppendNull()
			continue
		}
		bl.Append(f(s.Value(i)))
	}
	return bl.NewArray(), nil
}

func mapStringsBool(ec *evalCtx, x arrow.Array, f func(string) bool) (arrow.Array, error) {
	if a, ok := x.(*array.String); ok && a.Len() == ec.n {
		return mapUTF8Bool(ec, a, f), nil
	}
	s := asStrs(x)
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if s.IsNull(i) {
			bl.AppendNull()
			continue
		}
		bl.Append(f(s.Value(i)))
	}
	return bl.NewArray(), nil
}

// mapUTF8Bool is mapStringsBool over a plain utf8 array: the result bits
// are set straight into one bitmap and the validity is a copy of x's (a
// builder appending row by row cost more than the matching).
func mapUTF8Bool(ec *evalCtx, a *array.String, f func(string) bool) arrow.Array {
	n := a.Len()
	nbytes := int(bitutil.BytesForBits(int64(n)))
	vals := memory.NewResizableBuffer(ec.mem)
	vals.Resize(nbytes)
	bits := vals.Bytes()
	clear(bits)
	nulls := a.NullN()
	for i := 0; i < n; i++ {
		if (nulls == 0 || a.IsValid(i)) && f(a.Value(i)) {
			bitutil.SetBit(bits, i)
		}
	}
	return boolArray(n, copyValidity(ec, a, bits), vals, nulls)
}

// copyValidity is a's validity as a bitmap at offset 0 from the batch's
// allocator (nil when a has no NULLs), and clears the bits of a's NULL rows
// in bits: NULL rows read false, as arrow-go's kernels leave them (a reader
// that skips the validity, such as one that counts the set bits, must not count
// them).
func copyValidity(ec *evalCtx, a arrow.Array, bits []byte) *memory.Buffer {
	if a.NullN() == 0 {
		return nil
	}
	valid := memory.NewResizableBuffer(ec.mem)
	valid.Resize(len(bits))
	vb := valid.Bytes()
	clear(vb)
	bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), a.Len(), vb, 0)
	for i := range bits {
		bits[i] &= vb[i]
	}
	return valid
}

// boolArray makes a boolean array of n rows from its validity (nil: no
// NULLs) and value bitmaps, taking over their references.
func boolArray(n int, valid, vals *memory.Buffer, nulls int) arrow.Array {
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	vals.Release()
	return array.MakeFromData(data)
}

// likeFast is the matcher of a LIKE pattern that is a literal with % only at its ends (the common
// 'abc%', '%abc', '%abc%', 'abc') as a prefix, suffix, substring or equality test; nil for any other
// pattern (_, an escape, an inner %, ILIKE), which goes to the regular expression.
func likeFast(pat, escape string, fold bool) func(string) bool {
	esc := "\\"
	if escape != "" {
		esc = escape
	}
	if fold || strings.Contains(pat, esc) || strings.ContainsRune(pat, '_') {
		return nil
	}
	lead := strings.HasPrefix(pat, "%")
	core := strings.TrimLeft(pat, "%")
	trail := strings.HasSuffix(core, "%")
	core = strings.TrimRight(core, "%")
	if strings.ContainsRune(core, '%') {
		return nil
	}
	switch {
	case core == "" && (lead || trail):
		return func(string) bool { return true }
	case lead && trail:
		return func(s string) bool { return strings.Contains(s, core) }
	case lead:
		return func(s string) bool { return strings.HasSuffix(s, core) }
	case trail:
		return func(s string) bool { return strings.HasPrefix(s, core) }
	}
	return func(s string) bool { return s == core }
}

// likePrefix is the literal of a pattern 'literal%' (likeFast's prefix case: no _, no escape, no
// other %, not ILIKE); false for every other pattern.
func likePrefix(pat, escape string, fold bool) (string, bool) {
	esc := "\\"
	if escape != "" {
		esc = escape
	}
	if fold || strings.Contains(pat, esc) || strings.ContainsRune(pat, '_') || strings.HasPrefix(pat, "%") {
		return "", false
	}
	core := strings.TrimRight(pat, "%")
	if core == pat || strings.ContainsRune(core, '%') {
		return "", false
	}
	return core, true
}

// mapUTF8Prefix is mapUTF8Bool with strings.HasPrefix(row, prefix), comparing each row's bytes in
// the values buffer (no string header and no matcher call per row: count_rows with
// name LIKE 'vector-%' spent more in those than in the comparison).
func mapUTF8Prefix(ec *evalCtx, a *array.String, prefix string) arrow.Array {
	n := a.Len()
	nbytes := int(bitutil.BytesForBits(int64(n)))
	vals := memory.NewResizableBuffer(ec.mem)
	vals.Resize(nbytes)
	bits := vals.Bytes()
	clear(bits)
	offs := a.ValueOffsets() // n+1 positions in the whole values buffer
	var data []byte
	if bufs := a.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	p := len(prefix)
	for i := 0; i < n; i++ {
		lo := int(offs[i])
		if int(offs[i+1])-lo >= p && string(data[lo:lo+p]) == prefix {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
	return boolArray(n, copyValidity(ec, a, bits), vals, a.NullN())
}

// likeRegexp compiles a LIKE pattern: % any run, _ one character, the escape character (backslash
// unless ESCAPE says otherwise) makes the next one literal.
func likeRegexp(pat, escape string, fold bool) (*regexp.Regexp, error) {
	esc := '\\'
	if escape != "" {
		r, n := utf8.DecodeRuneInString(escape)
		if n != len(escape) {
			return nil, fmt.Errorf("ESCAPE must be one character")
		}
		esc = r
	}
	var b strings.Builder
	b.WriteString("(?s)^")
	if fold {
		b.WriteString("(?i)")
	}
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == esc:
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			} else {
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func concatOp(ec *evalCtx, args []arrow.Array) (arrow.Array, error) {
	// a || b: NULL if either is NULL.
	return concatStrings(ec, args, true)
}

func concatStrings(ec *evalCtx, args []arrow.Array, nullIfAny bool) (arrow.Array, error) {
	ss := make([]strs, len(args))
	for i, a := range args {
		if !isString(a.DataType()) && a.DataType().ID() != arrow.NULL {
			c, err := compute.CastArray(ec.ctx, a, compute.SafeCastOptions(tUtf8))
			if err != nil {
				return nil, evalErr(err)
			}
			defer c.Release()
			a = c
		}
		ss[i] = asStrs(a)
	}
	bl := array.NewStringBuilder(ec.mem)
	defer bl.Release()
	var sb strings.Builder
	for i := 0; i < ec.n; i++ {
		sb.Reset()
		null := false
		for _, s := range ss {
			if s.IsNull(i) {
				null = true
				continue
			}
			sb.WriteString(s.Value(i))
		}
		if null && nullIfAny {
			bl.AppendNull()
			continue
		}
		bl.Append(sb.String())
	}
	return bl.NewArray(), nil
}

// call binds a function call: argument count and types are checked here, so a bad call is a 400
// before any row is read.
func (b *binder) call(c *Call) (node, error) {
	switch c.Name {
	case "array_has_any", "list_has_any", "arrays_overlap", "array_has_all", "list_has_all":
		return b.arrayHasSet(c)
	}
	args := make([]node, len(c.Args))
	for i, a := range c.Args {
		n, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		args[i] = n
	}
	argc := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return errorf(c.P, "", "%s takes %d argument(s), got %d", c.Name, lo, len(args))
			}
			return errorf(c.P, "", "%s takes %d to %d arguments, got %d", c.Name, lo, hi, len(args))
		}
		return nil
	}
	want := func(i int, ok func(arrow.DataType) bool, what string) error {
		t := args[i].typ()
		if t.ID() == arrow.NULL || ok(t) {
			return nil
		}
		return errorf(c.Args[i].Pos(), columnName(c.Args[i]), "argument %d of %s must be %s, not %s", i+1, c.Name, what, t)
	}
	isInteger := func(t arrow.DataType) bool { return isInt(t) }
	fnode := func(out arrow.DataType, fn func(*evalCtx, []arrow.Array) (arrow.Array, error)) node {
		return &funcNode{name: c.Name, args: args, out: out, fn: fn}
	}
	switch c.Name {
	case "lower", "upper", "trim", "btrim", "ltrim", "rtrim":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		if err := want(0, isString, "a string"); err != nil {
			return nil, err
		}
		// Full Unicode case mapping, as Rust's str::to_uppercase (ß → SS). A Caser is not safe for
		// concurrent use: one per evaluation.
		mk := map[string]func() func(string) string{
			"lower": func() func(string) string { return cases.Lower(language.Und).String },
			"upper": func() func(string) string { return cases.Upper(language.Und).String },
			"trim":  func() func(string) string { return func(s string) string { return strings.Trim(s, " ") } },
			"btrim": func() func(string) string { return func(s string) string { return strings.Trim(s, " ") } },
			"ltrim": func() func(string) string { return func(s string) string { return strings.TrimLeft(s, " ") } },
			"rtrim": func() func(string) string { return func(s string) string { return strings.TrimRight(s, " ") } },
		}[c.Name]
		return fnode(tUtf8, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) { return mapStrings(ec, a[0], mk()) }), nil
	case "length", "char_length", "character_length", "octet_length":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		if err := want(0, isString, "a string"); err != nil {
			return nil, err
		}
		octets := c.Name == "octet_length"
		return fnode(tInt32, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
			s := asStrs(a[0])
			bl := array.NewInt32Builder(ec.mem)
			defer bl.Release()
			for i := 0; i < ec.n; i++ {
				if s.IsNull(i) {
					bl.AppendNull()
				} else if octets {
					bl.Append(int32(len(s.Value(i))))
				} else {
					bl.Append(int32(utf8.RuneCountInString(s.Value(i))))
				}
			}
			return bl.NewArray(), nil
		}), nil
	case "concat":
		if len(args) == 0 {
			return nil, errorf(c.P, "", "concat takes at least one argument")
		}
		// concat skips NULL arguments (unlike ||).
		return fnode(tUtf8, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) { return concatStrings(ec, a, false) }), nil
	case "substr", "substring":
		if err := argc(2, 3); err != nil {
			return nil, err
		}
		if err := want(0, isString, "a string"); err != nil {
			return nil, err
		}
		for i := 1; i < len(args); i++ {
			if err := want(i, isInteger, "an integer"); err != nil {
				return nil, err
			}
		}
		return fnode(tUtf8, substr), nil
	case "starts_with", "ends_with", "contains":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		for i := range 2 {
			if err := want(i, isString, "a string"); err != nil {
				return nil, err
			}
		}
		f := strings.HasPrefix
		switch c.Name {
		case "ends_with":
			f = strings.HasSuffix
		case "contains": // DataFusion's contains(str, search): a substring test
			f = strings.Contains
		}
		return fnode(tBool, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) { return stringPair(ec, a[0], a[1], f) }), nil
	case "regexp_like", "regexp_match":
		if err := argc(2, 3); err != nil {
			return nil, err
		}
		if err := want(0, isString, "a string"); err != nil {
			return nil, err
		}
		pat, ok := c.Args[1].(*Literal)
		if !ok || pat.Kind != LitString {
			return nil, errorf(c.Args[1].Pos(), "", "%s needs a string literal pattern", c.Name)
		}
		flags := ""
		if len(args) == 3 {
			fl, ok := c.Args[2].(*Literal)
			if !ok || fl.Kind != LitString || strings.Trim(fl.Text, "imsU") != "" {
				return nil, errorf(c.Args[2].Pos(), "", "%s flags must be a string literal of i, m, s, U", c.Name)
			}
			flags = fl.Text
		}
		src := pat.Text
		if flags != "" {
			src = "(?" + flags + ")" + src
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, errorf(pat.P, "", "invalid regular expression: %v", err)
		}
		if c.Name == "regexp_like" {
			return fnode(tBool, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
				return mapStringsBool(ec, a[0], re.MatchString)
			}), nil
		}
		return fnode(arrow.ListOf(tUtf8), func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) { return regexpMatch(ec, a[0], re) }), nil
	case "abs":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		if err := want(0, isNumeric, "a number"); err != nil {
			return nil, err
		}
		t := args[0].typ()
		if isDecimal(t) {
			args[0] = b.castTo(args[0], tFloat64)
			t = tFloat64
		}
		return fnode(t, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
			if a[0].DataType().ID() == arrow.NULL {
				a[0].Retain()
				return a[0], nil
			}
			return call1(ec, "abs", nil, a[0]) // overflow (abs of the minimum) is an error, as in Lance
		}), nil
	case "round":
		if err := argc(1, 2); err != nil {
			return nil, err
		}
		if err := want(0, isNumeric, "a number"); err != nil {
			return nil, err
		}
		digits := int64(0)
		if len(args) == 2 {
			l, ok := c.Args[1].(*Literal)
			if !ok || l.Kind != LitInt {
				return nil, errorf(c.Args[1].Pos(), "", "the digits of round must be an integer literal")
			}
			fmt.Sscan(l.Text, &digits)
		}
		t := args[0].typ()
		if t.ID() != arrow.FLOAT32 {
			args[0] = b.castTo(args[0], tFloat64)
			t = tFloat64
		}
		args = args[:1]
		return fnode(t, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
			opts := compute.RoundOptions{NDigits: digits, Mode: compute.RoundHalfTowardsInfinity}
			out, err := compute.Round(ec.ctx, opts, compute.NewDatumWithoutOwning(a[0]))
			if err != nil {
				return nil, evalErr(err)
			}
			return datumArray(out), nil
		}), nil
	case "coalesce":
		if len(args) == 0 {
			return nil, errorf(c.P, "", "coalesce takes at least one argument")
		}
		t := arrow.DataType(tNull)
		for i, a := range args {
			var ok bool
			if t, ok = commonType(t, a.typ()); !ok {
				return nil, errorf(c.Args[i].Pos(), columnName(c.Args[i]), "coalesce arguments have incompatible types")
			}
		}
		for i := range args {
			args[i] = b.castTo(args[i], t)
		}
		return &coalesceNode{args: args, t: t}, nil
	case "array_has", "array_contains", "list_has":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		if err := want(0, isList, "a list"); err != nil {
			return nil, err
		}
		return b.arrayHas(c, args)
	case "make_array", "make_list":
		return b.makeArray(c, args)
	case "isnan":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		if err := want(0, isNumeric, "a number"); err != nil {
			return nil, err
		}
		return fnode(tBool, isNaN), nil
	case "array_length", "list_length", "cardinality":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		if err := want(0, isList, "a list"); err != nil {
			return nil, err
		}
		return fnode(arrow.PrimitiveTypes.Uint64, arrayLength), nil
	case "date_part", "datepart":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		part, ok := c.Args[0].(*Literal)
		if !ok || part.Kind != LitString {
			return nil, errorf(c.Args[0].Pos(), "", "the first argument of date_part must be a string literal")
		}
		if err := want(1, isTemporal, "a date or timestamp"); err != nil {
			return nil, err
		}
		p := strings.ToLower(part.Text)
		switch p {
		case "year", "month", "day", "hour", "minute", "second", "dow", "doy", "quarter", "week", "epoch":
		default:
			return nil, errorf(part.P, "", "unsupported date part %q", part.Text)
		}
		args = args[1:]
		return fnode(tInt32, func(ec *evalCtx, a []arrow.Array) (arrow.Array, error) { return datePart(ec, p, a[0]) }), nil
	}
	return nil, errorf(c.P, "", "unknown function %s", c.Name)
}

func stringPair(ec *evalCtx, x, y arrow.Array, f func(a, b string) bool) (arrow.Array, error) {
	a, b := asStrs(x), asStrs(y)
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if a.IsNull(i) || b.IsNull(i) {
			bl.AppendNull()
			continue
		}
		bl.Append(f(a.Value(i), b.Value(i)))
	}
	return bl.NewArray(), nil
}

// substr(s, start[, count]) counts characters from 1; a start before 1 still counts from there
// (substr('abc', 0, 2) is 'a'), as in PostgreSQL and DataFusion.
func substr(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
	s := asStrs(a[0])
	bl := array.NewStringBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if s.IsNull(i) || a[1].IsNull(i) || len(a) == 3 && a[2].IsNull(i) {
			bl.AppendNull()
			continue
		}
		rs := []rune(s.Value(i))
		start := IntAt(a[1], i)
		end := int64(math.MaxInt64)
		if len(a) == 3 {
			cnt := IntAt(a[2], i)
			if cnt < 0 {
				return nil, errorf(-1, "", "negative substring length not allowed")
			}
			end = start + cnt
			if end < start { // overflow
				end = math.MaxInt64
			}
		}
		from := max(start, 1) - 1
		to := min(end-1, int64(len(rs)))
		if from >= to || from >= int64(len(rs)) {
			bl.Append("")
			continue
		}
		bl.Append(string(rs[from:to]))
	}
	return bl.NewArray(), nil
}

func regexpMatch(ec *evalCtx, x arrow.Array, re *regexp.Regexp) (arrow.Array, error) {
	s := asStrs(x)
	bl := array.NewListBuilder(ec.mem, tUtf8)
	defer bl.Release()
	vb := bl.ValueBuilder().(*array.StringBuilder)
	for i := 0; i < ec.n; i++ {
		// Lance's regexp_match gives an empty list, not NULL, when nothing matches (or the string is
		// NULL): `regexp_match(s, 'z') IS NULL` keeps no row in the SDK.
		bl.Append(true)
		if s.IsNull(i) {
			continue
		}
		m := re.FindStringSubmatch(s.Value(i))
		if m == nil {
			continue
		}
		if len(m) == 1 {
			vb.Append(m[0])
		} else {
			for _, g := range m[1:] {
				vb.Append(g)
			}
		}
	}
	return bl.NewArray(), nil
}

// coalesceNode is the first non-NULL argument, row by row, through one take (see pick).
type coalesceNode struct {
	args []node
	t    arrow.DataType
}

func (n *coalesceNode) typ() arrow.DataType { return n.t }
func (n *coalesceNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	choice := make([]int, ec.n)
	for i := range choice {
		choice[i] = len(n.args) - 1
	}
	done := make([]bool, ec.n)
	for k, a := range n.args {
		v, err := a.eval(ec)
		if err != nil {
			return nil, err
		}
		for i := 0; i < ec.n; i++ {
			if !done[i] && v.DataType().ID() != arrow.NULL && v.IsValid(i) {
				choice[i], done[i] = k, true
			}
		}
		v.Release()
	}
	return pick(ec, n.args, n.t, choice)
}

// listView gives the offsets of a list array.
func listBounds(a arrow.Array, i int) (start, end int64, values arrow.Array) {
	switch l := a.(type) {
	case *array.List:
		s, e := l.ValueOffsets(i)
		return s, e, l.ListValues()
	case *array.LargeList:
		s, e := l.ValueOffsets(i)
		return s, e, l.ListValues()
	case *array.FixedSizeList:
		n := int64(l.DataType().(*arrow.FixedSizeListType).Len())
		off := int64(l.Offset()+i) * n
		return off, off + n, l.ListValues()
	}
	return 0, 0, nil
}

// arrayLength is the number of elements of each list (NULL for a NULL list): a loop over offsets.
func arrayLength(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
	bl := array.NewUint64Builder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if a[0].IsNull(i) {
			bl.AppendNull()
			continue
		}
		s, e, _ := listBounds(a[0], i)
		bl.Append(uint64(e - s))
	}
	return bl.NewArray(), nil
}

// arrayHasSet binds array_has_any(list, [v, …]) and array_has_all(list, [v, …]) as the OR (AND)
// of array_has(list, v), each value taking the list's element type as in array_has — except that,
// as in DataFusion (which compares rows, where NULL equals NULL), a NULL value matches a NULL
// element. An empty array is false (any) or true (all) for every row, NULL lists too (measured
// with the SDK). The values are an array literal (or make_array); a list column as the second
// argument is refused.
func (b *binder) arrayHasSet(c *Call) (node, error) {
	if len(c.Args) != 2 {
		return nil, errorf(c.P, "", "%s takes 2 argument(s), got %d", c.Name, len(c.Args))
	}
	set, ok := c.Args[1].(*Call)
	if !ok || set.Name != "make_array" && set.Name != "make_list" {
		return nil, errorf(c.Args[1].Pos(), columnName(c.Args[1]), "the second argument of %s must be an array literal such as ['a', 'b']", c.Name)
	}
	if b.listTerms += len(set.Args); b.listTerms > MaxTerms {
		return nil, errorf(c.P, columnName(c.Args[0]), "%s counts each value as a term: more than %d in the expression", c.Name, MaxTerms)
	}
	all := c.Name == "array_has_all" || c.Name == "list_has_all"
	if len(set.Args) == 0 {
		return b.literal(&Literal{P: c.P, Kind: LitBool, Text: fmt.Sprint(all)}, nil)
	}
	var out node
	for _, v := range set.Args {
		var has node
		if l, ok := v.(*Literal); ok && l.Kind == LitNull {
			list, err := b.bind(c.Args[0])
			if err != nil {
				return nil, err
			}
			if !isList(list.typ()) && list.typ().ID() != arrow.NULL {
				return nil, errorf(c.Args[0].Pos(), columnName(c.Args[0]), "argument 1 of %s must be a list, not %s", c.Name, list.typ())
			}
			has = &funcNode{name: c.Name, args: []node{list}, out: tBool, fn: listHasNull}
		} else {
			var err error
			if has, err = b.bind(&Call{P: v.Pos(), Name: "array_has", Args: []Expr{c.Args[0], v}}); err != nil {
				return nil, err
			}
		}
		if out == nil {
			out = has
		} else {
			out = &logicNode{and: all, l: out, r: has}
		}
	}
	return out, nil
}

// listHasNull: whether a list holds a NULL element (NULL for a NULL list).
func listHasNull(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		if a[0].DataType().ID() == arrow.NULL || a[0].IsNull(i) {
			bl.AppendNull()
			continue
		}
		s, e, values := listBounds(a[0], i)
		found := false
		for j := s; j < e && !found; j++ {
			found = values.IsNull(int(j))
		}
		bl.Append(found)
	}
	return bl.NewArray(), nil
}

// makeArray binds make_array(a, b, …) ([a, b, …]): a list per row of the values in their common
// type (DataFusion's), of element type Null when there are none.
func (b *binder) makeArray(c *Call, args []node) (node, error) {
	if b.listTerms += len(args); b.listTerms > MaxTerms {
		return nil, errorf(c.P, "", "an array literal counts each value as a term: more than %d in the expression", MaxTerms)
	}
	var t arrow.DataType = tNull
	for i, a := range args {
		u, ok := commonType(t, a.typ())
		if !ok {
			return nil, errorf(c.Args[i].Pos(), columnName(c.Args[i]), "array elements have incompatible types %s and %s", t, a.typ())
		}
		t = u
	}
	for i := range args {
		args[i] = b.castTo(args[i], t)
	}
	return &makeArrayNode{elems: args, elem: t}, nil
}

type makeArrayNode struct {
	elems []node
	elem  arrow.DataType
}

func (n *makeArrayNode) typ() arrow.DataType { return arrow.ListOf(n.elem) }

// eval lays the k element columns out row by row: the values are their concatenation taken at
// j*n + i for row i's element j (one take), the offsets k apart.
func (n *makeArrayNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	k := len(n.elems)
	cols := make([]arrow.Array, 0, k)
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for _, e := range n.elems {
		a, err := e.eval(ec)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
	}
	var values arrow.Array
	if k == 0 {
		values = array.MakeArrayOfNull(ec.mem, n.elem, 0)
	} else {
		all, err := array.Concatenate(cols, ec.mem)
		if err != nil {
			return nil, evalErr(err)
		}
		defer all.Release()
		ib := array.NewInt64Builder(ec.mem)
		defer ib.Release()
		ib.Reserve(ec.n * k)
		for i := 0; i < ec.n; i++ {
			for j := 0; j < k; j++ {
				ib.UnsafeAppend(int64(j*ec.n + i))
			}
		}
		idx := ib.NewArray()
		defer idx.Release()
		if values, err = compute.TakeArray(ec.ctx, all, idx); err != nil {
			return nil, evalErr(err)
		}
	}
	defer values.Release()
	offsets := make([]int32, ec.n+1)
	for i := range offsets {
		offsets[i] = int32(i * k)
	}
	data := array.NewData(arrow.ListOf(n.elem), ec.n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{values.Data()}, 0, 0)
	defer data.Release()
	return array.NewListData(data), nil
}

// isNaN is isnan(x): true for a float NaN, false for any other number (integers and decimals are
// never NaN), NULL for NULL.
func isNaN(ec *evalCtx, a []arrow.Array) (arrow.Array, error) {
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	x := a[0]
	for i := 0; i < ec.n; i++ {
		if x.IsNull(i) {
			bl.AppendNull()
			continue
		}
		switch v := x.(type) {
		case *array.Float32:
			bl.Append(math.IsNaN(float64(v.Value(i))))
		case *array.Float64:
			bl.Append(math.IsNaN(v.Value(i)))
		case *array.Float16:
			bl.Append(v.Value(i).IsNaN())
		default:
			bl.Append(false)
		}
	}
	return bl.NewArray(), nil
}

// arrayHas binds array_has(list, value): the value takes the element type. Evaluation compares the
// flattened elements with the value repeated per element (one comparison kernel), then ORs per list.
func (b *binder) arrayHas(c *Call, args []node) (node, error) {
	lt := args[0].typ()
	var elem arrow.DataType
	switch t := lt.(type) {
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.LargeListType:
		elem = t.Elem()
	case *arrow.FixedSizeListType:
		elem = t.Elem()
	default:
		elem = tNull
	}
	needle := args[1]
	if l, ok := c.Args[1].(*Literal); ok && elem.ID() != arrow.NULL {
		// The literal takes the element type where it can (5 in a list of int8); where it
		// cannot (1.5 in a list of int64) both widen to their common type, as DataFusion's
		// coercion does, and nothing matches rather than the call failing.
		if n, err := b.literal(l, elem); err == nil {
			needle = n
		}
	}
	t, ok := commonType(elem, needle.typ())
	if !ok || !comparable(t) && t.ID() != arrow.NULL {
		return nil, errorf(c.P, columnName(c.Args[0]), "array_has: cannot look for %s in a list of %s", needle.typ(), elem)
	}
	return &arrayHasNode{list: args[0], needle: b.castTo(needle, t), elem: t}, nil
}

type arrayHasNode struct {
	list, needle node
	elem         arrow.DataType
}

func (n *arrayHasNode) typ() arrow.DataType { return tBool }
func (n *arrayHasNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	lists, err := n.list.eval(ec)
	if err != nil {
		return nil, err
	}
	defer lists.Release()
	needle, err := n.needle.eval(ec)
	if err != nil {
		return nil, err
	}
	defer needle.Release()
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	if lists.DataType().ID() == arrow.NULL || needle.DataType().ID() == arrow.NULL {
		for i := 0; i < ec.n; i++ {
			bl.AppendNull()
		}
		return bl.NewArray(), nil
	}
	// Expand: element j of list i is compared with needle[i].
	var total int64
	owner := make([]int, 0)
	var values arrow.Array
	for i := 0; i < ec.n; i++ {
		s, e, v := listBounds(lists, i)
		values = v
		if lists.IsNull(i) {
			continue
		}
		for j := s; j < e; j++ {
			owner = append(owner, i)
		}
		total += e - s
	}
	found := make([]bool, ec.n)
	if total > 0 && values != nil {
		eidx := array.NewInt64Builder(ec.mem)
		nidx := array.NewInt64Builder(ec.mem)
		for i := 0; i < ec.n; i++ {
			if lists.IsNull(i) {
				continue
			}
			s, e, _ := listBounds(lists, i)
			for j := s; j < e; j++ {
				eidx.Append(j)
				nidx.Append(int64(i))
			}
		}
		ei, ni := eidx.NewArray(), nidx.NewArray()
		eidx.Release()
		nidx.Release()
		defer ei.Release()
		defer ni.Release()
		elems, err := compute.TakeArray(ec.ctx, values, ei)
		if err != nil {
			return nil, evalErr(err)
		}
		defer elems.Release()
		if !arrow.TypeEqual(elems.DataType(), n.elem) {
			c, err := compute.CastArray(ec.ctx, elems, compute.UnsafeCastOptions(n.elem)) // lossy where DataFusion is (int64 to float64)
			if err != nil {
				return nil, evalErr(err)
			}
			defer c.Release()
			elems = c
		}
		needles, err := compute.TakeArray(ec.ctx, needle, ni)
		if err != nil {
			return nil, evalErr(err)
		}
		defer needles.Release()
		sub := &evalCtx{ctx: ec.ctx, n: int(total), mem: ec.mem}
		eq, err := (&cmpNode{op: "=", l: &arrNode{elems}, r: &arrNode{needles}}).eval(sub)
		if err != nil {
			return nil, err
		}
		defer eq.Release()
		eb := eq.(*array.Boolean)
		for k := 0; k < int(total); k++ {
			if eb.IsValid(k) && eb.Value(k) {
				found[owner[k]] = true
			}
		}
	}
	for i := 0; i < ec.n; i++ {
		if lists.IsNull(i) || needle.IsNull(i) {
			bl.AppendNull()
			continue
		}
		bl.Append(found[i])
	}
	return bl.NewArray(), nil
}

// arrNode is an already evaluated array (used inside composite kernels).
type arrNode struct{ a arrow.Array }

func (n *arrNode) typ() arrow.DataType { return n.a.DataType() }
func (n *arrNode) eval(*evalCtx) (arrow.Array, error) {
	n.a.Retain()
	return n.a, nil
}

// datePart extracts a field of dates or timestamps (UTC when the timestamp has no zone): a loop,
// arrow-go has no temporal component kernels.
func datePart(ec *evalCtx, part string, a arrow.Array) (arrow.Array, error) {
	bl := array.NewInt32Builder(ec.mem)
	defer bl.Release()
	at := func(i int) time.Time {
		switch v := a.(type) {
		case *array.Date32:
			return v.Value(i).ToTime()
		case *array.Date64:
			return v.Value(i).ToTime()
		case *array.Timestamp:
			unit := v.DataType().(*arrow.TimestampType).Unit
			return v.Value(i).ToTime(unit)
		}
		return time.Time{}
	}
	for i := 0; i < ec.n; i++ {
		if a.DataType().ID() == arrow.NULL || a.IsNull(i) {
			bl.AppendNull()
			continue
		}
		t := at(i).UTC()
		var v int
		switch part {
		case "year":
			v = t.Year()
		case "month":
			v = int(t.Month())
		case "day":
			v = t.Day()
		case "hour":
			v = t.Hour()
		case "minute":
			v = t.Minute()
		case "second":
			v = t.Second()
		case "dow":
			v = int(t.Weekday())
		case "doy":
			v = t.YearDay()
		case "quarter":
			v = (int(t.Month())-1)/3 + 1
		case "week":
			_, v = t.ISOWeek()
		case "epoch":
			v = int(t.Unix())
		}
		bl.Append(int32(v))
	}
	return bl.NewArray(), nil
}
