package expr

import (
	"testing"

	"gotest.tools/v3/assert"
)

// The fast LIKE matchers (prefix, suffix, substring, equality) answer as
// the regular expression does, on every pattern they take, and decline the
// ones they cannot.
func TestLikeFastAgreesWithRegexp(t *testing.T) {
	strs := []string{"", "a", "abc", "xabc", "abcx", "xabcx", "ab", "ABC", "a%c", "a_c", "héllo", "日本語", "a\nb", "%", "abcabc"}
	for _, pat := range []string{"abc", "abc%", "%abc", "%abc%", "%", "%%", "", "a%%", "%%c", "héllo%", "%語", "%\n%"} {
		fast := likeFast(pat, "", false)
		assert.Assert(t, fast != nil, "pattern %q should take the fast path", pat)
		re, err := likeRegexp(pat, "", false)
		assert.NilError(t, err)
		for _, s := range strs {
			assert.Equal(t, fast(s), re.MatchString(s), "%q LIKE %q", s, pat)
		}
	}
	for _, pat := range []string{"a_c", "a%c", `a\%`, "%a%c%"} {
		assert.Assert(t, likeFast(pat, "", false) == nil, "pattern %q must use the regexp", pat)
	}
	assert.Assert(t, likeFast("abc%", "", true) == nil, "ILIKE uses the regexp")
	assert.Assert(t, likeFast("a!%", "!", false) == nil, "a pattern with its ESCAPE character uses the regexp")
}
