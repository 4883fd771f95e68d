/*
 * engine-selector: profile selectors (engine/selector.h) - every
 * operator against labels worked out by hand (tags, name, hostname, id,
 * absent labels, anchoring, quoting and escapes), every error with the
 * position it must name, and the time bounds (unix seconds, durations,
 * RFC 3339) with theirs.
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "engine/selector.h"

static const char *const keys[] = { "branch", "host", "kind", "dotted.key", "name" };
static const char *const values[] = { "main", "ci-7", "nightly", "x", "a-tag-named-name" };

static pe_labels profile(void)
{
	pe_labels l = { 42, "smoke-test", "builder-3", 5, keys, values };

	return l;
}

/* 1 = matches, 0 = does not, -1 = did not parse */
static int sel(const char *text)
{
	pe_labels l = profile();
	pe_sel_error err;
	pe_sel *s = pe_sel_parse(text, strlen(text), &err);
	int rc;

	if (!s) {
		printf("  (%s: %s)\n", text, err.msg);
		return -1;
	}
	rc = pe_sel_match(s, &l);
	pe_sel_free(s);
	return rc;
}

#define MATCHES(text) CHECK(sel(text) == 1, "%s should match", text)
#define MISSES(text) CHECK(sel(text) == 0, "%s should not match", text)

static void test_operators(void)
{
	/* = */
	MATCHES("{branch=\"main\"}");
	MISSES("{branch=\"mai\"}");
	MISSES("{branch=\"main \"}");
	/* != */
	MATCHES("{branch!=\"dev\"}");
	MISSES("{branch!=\"main\"}");
	/* =~ is anchored at both ends */
	MATCHES("{host=~\"ci-.*\"}");
	MATCHES("{host=~\"ci-[0-9]+\"}");
	MISSES("{host=~\"ci\"}");
	MISSES("{host=~\"-7\"}");
	MATCHES("{kind=~\"night.*|tmp\"}");
	MISSES("{kind=~\"tmp|test\"}");
	MISSES("{kind=~\"ni|ghtly\"}");	/* ^(ni|ghtly)$, not ^ni|ghtly$ */
	/* !~ */
	MATCHES("{kind!~\"tmp|test\"}");
	MISSES("{kind!~\"n.*\"}");
	/* several: all must hold */
	MATCHES("{branch=\"main\", host=~\"ci-.*\", name!=\"smoke\", kind!~\"tmp|test\"}");
	MISSES("{branch=\"main\", host=~\"ci-.*\", name!=\"smoke-test\"}");
	/* the profile's own labels: name, hostname, id (a tag cannot hide them) */
	MATCHES("{name=\"smoke-test\"}");
	MATCHES("{hostname=\"builder-3\", id=\"42\"}");
	MATCHES("{id=~\"4[0-9]\"}");
	MISSES("{id=\"4\"}");
	/* an absent label is "" */
	MATCHES("{missing=\"\"}");
	MATCHES("{missing!=\"x\"}");
	MATCHES("{missing!~\".+\"}");
	MISSES("{missing=~\".+\"}");
	MISSES("{branch=\"\"}");
	/* {} and spacing, a trailing comma, label characters, quoting */
	MATCHES("{}");
	MATCHES("  { }  ");
	MATCHES("{\tbranch = \"main\" ,\n}");
	MATCHES("{dotted.key=\"x\"}");
	MATCHES("{\"dotted.key\"=\"x\"}");
	MATCHES("{branch='main'}");
	MATCHES("{branch=`main`}");
	MATCHES("{host=~`ci-\\w+`}");	/* raw: the backslash reaches the regex */
	MATCHES("{host=~\"ci-\\\\w+\"}");
	/* escapes */
	MATCHES("{branch=\"\\x6dain\"}");
	MATCHES("{branch=\"\\u006Dain\"}");
	MATCHES("{branch=\"\\U0000006dain\"}");
	MATCHES("{branch=\"\\155ain\"}");
	MISSES("{branch=\"main\\n\"}");
	MISSES("{branch='m\\'ain'}");
}

static void test_unicode(void)
{
	static const char *const k[] = { "who" };
	static const char *const v[] = { "J\xc3\xbcrgen \xe2\x82\xac \xf0\x9f\x98\x80 \"q\"" };
	pe_labels l = { 1, NULL, NULL, 1, k, v };
	const char *text = "{who=\"J\\u00fcrgen \\u20AC \\U0001F600 \\\"q\\\"\"}";
	pe_sel_error err;
	pe_sel *s = pe_sel_parse(text, strlen(text), &err);
	const char *lbl, *val;
	int o;

	CHECK(s && pe_sel_match(s, &l) == 1, "unicode escapes: %s", s ? "no match" : err.msg);
	if (s) {
		CHECK(pe_sel_count(s) == 1, "count");
		pe_sel_matcher(s, 0, &lbl, &o, &val);
		CHECK(!strcmp(lbl, "who") && o == PE_SEL_EQ && !strcmp(val, v[0]), "matcher");
	}
	pe_sel_free(s);
	/* no name, no host: "" for both */
	CHECK(sel("{}") == 1, "{}");
	s = pe_sel_parse("{name=\"\",hostname=\"\"}", 21, &err);
	CHECK(s && pe_sel_match(s, &l) == 1, "absent name/hostname are empty");
	pe_sel_free(s);
}

/* text must fail at `pos` with `what` in the message */
static void bad(const char *text, size_t pos, const char *what)
{
	pe_sel_error err;
	pe_sel *s = pe_sel_parse(text, strlen(text), &err);
	char want[64];

	CHECK(!s, "%s: should not parse", text);
	pe_sel_free(s);
	if (s)
		return;
	snprintf(want, sizeof(want), "at position %zu: ", pos);
	CHECK(err.pos == pos && !strncmp(err.msg, want, strlen(want)),
	      "%s: position %zu, want %zu (%s)", text, err.pos, pos, err.msg);
	CHECK(strstr(err.msg, what) != NULL, "%s: message '%s' lacks '%s'", text, err.msg, what);
}

static void test_errors(void)
{
	char big[PE_SEL_MAX_TEXT + 16], many[PE_SEL_MAX_MATCHERS * 8 + 16], re[PE_SEL_MAX_REGEX + 16];
	size_t i, n;

	bad("", 1, "expected '{'");
	bad("branch=\"main\"", 1, "expected '{'");
	bad("  x{}", 3, "found 'x'");
	bad("{", 2, "expected a matcher or '}'");
	bad("{=\"x\"}", 2, "expected a label name");
	bad("{1a=\"x\"}", 2, "expected a label name");
	bad("{\"\"=\"x\"}", 2, "label name cannot be empty");
	bad("{branch \"x\"}", 9, "expected one of =, !=, =~, !~");
	bad("{branch<\"x\"}", 8, "found '<'");
	bad("{branch}", 8, "expected one of =, !=, =~, !~");
	bad("{branch=main}", 9, "expected a quoted value");
	bad("{branch=}", 9, "expected a quoted value");
	bad("{branch=\"main}", 9, "is not closed");
	bad("{branch='main}", 9, "is not closed");
	bad("{branch=`main}", 9, "is not closed");
	bad("{a=\"\\q\"}", 5, "unknown escape '\\q'");
	bad("{a=\"\\xZZ\"}", 5, "takes 2 hexadecimal digits");
	bad("{a=\"\\u12\"}", 5, "takes 4 hexadecimal digits");
	bad("{a=\"\\x00\"}", 5, "NUL character");
	bad("{a=\"\\uD800\"}", 5, "not a Unicode character");
	bad("{a=\"\\U00110000\"}", 5, "not a Unicode character");
	bad("{a=\"\\12\"}", 5, "three digits");
	bad("{a=\"\\777\"}", 5, "not a byte");
	bad("{a=\"\\", 5, "at the end of the text");
	bad("{a=\"x\ny\"}", 6, "new line");
	bad("{a=\"x\" b=\"y\"}", 8, "expected ',' or '}'");
	bad("{a=\"x\",", 8, "expected a matcher or '}'");
	bad("{a=\"x\"", 7, "expected ',' or '}'");
	bad("{a=\"x\"} z", 9, "nothing after the closing '}'");
	bad("{a=\"x\"}}", 8, "nothing after the closing '}'");
	bad("{a=\"x\",,b=\"y\"}", 8, "expected a label name");
	/* regular expressions */
	bad("{a=~\"(x)\\\\1\"}", 5, "back-references");
	bad("{a=~\"x)\"}", 5, "')' without its '('");
	bad("{a=~\"(x\"}", 5, "'(' in the regular expression is not closed");
	bad("{a=~\"[x\"}", 5, "'[' in the regular expression is not closed");
	bad("{a=~\"[[:alpha:]\"}", 5, "'[' in the regular expression is not closed");
	bad("{a=~\"(a{100}){101}\"}", 5, "more than 2000 parts");
	bad("{a=~\"((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+\"}", 5, "more than 2000 parts");
	bad("{a=~\"a{1,1000}\"}", 5, "more than 2000 parts");
	bad("{a=~\"(a|b|c|d){400}\"}", 5, "more than 2000 parts");
	/* the parts are the selector's together, not each expression's */
	CHECK(sel("{a=~\"x{1200}\"}") >= 0, "x{1200} alone");
	bad("{a=~\"x{1200}\", b=~\"y{1200}\"}", 19, "the selector's together");
	/* what regcomp passes without reading a character, repeated or in
	 * empty branches: its memory grows with the square of it and more
	 * ((a?){10000}: 1.5 GB; (||||||||||){86}: 1.9 GB; (((a?)?)?){130}:
	 * 0.5 GB) */
	bad("{a=~\"(a?){10}\"}", 5, "a repetition ('{') of what can match nothing");
	bad("{a=~\"(a*)+\"}", 5, "a repetition ('+') of what can match nothing");
	bad("{a=~\"((a?)?)?\"}", 5, "a repetition ('?') of what can match nothing");
	bad("{a=~\"(a|b?){5}\"}", 5, "of what can match nothing");
	bad("{a=~\"(a{0,3}b*){2}\"}", 5, "of what can match nothing");
	bad("{a=~\"(^|$)*\"}", 5, "of what can match nothing");
	bad("{a=~\"\\\\b*\"}", 5, "of what can match nothing");
	bad("{a=~\"(|a)\"}", 5, "an empty alternative");
	bad("{a=~\"(a|)\"}", 5, "an empty alternative");
	bad("{a=~\"a||b\"}", 5, "an empty alternative");
	bad("{a=~\"a|\"}", 5, "an empty alternative");
	bad("{a=~\"|a\"}", 5, "an empty alternative");
	bad("{a=~\"x()\"}", 5, "an empty group");
	/* the most the limits let through stays small */
	{
		static const char *const worst[] = {
			"{a=~\"a{0,997}\"}", "{a=~\"x{0,500}y{0,490}\"}",
			"{a=~\".{1990}\"}", "{a=~\"(a?b){300}\"}",
			"{a=~\"(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r|s|t){45}\"}",
		};
		struct rusage ru;
		long before, after;
		size_t k;

		getrusage(RUSAGE_SELF, &ru);
		before = ru.ru_maxrss;
		for (k = 0; k < sizeof(worst) / sizeof(worst[0]); k++)
			CHECK(sel(worst[k]) >= 0, "%s should parse", worst[k]);
		getrusage(RUSAGE_SELF, &ru);
		after = ru.ru_maxrss;
		CHECK(after - before < 100 * 1024, "the largest expressions allowed took %ld KB",
		      after - before);
	}
	bad("{a=~\"a++\"}", 5, "right after another");
	bad("{a=~\"a{2}*\"}", 5, "right after another");
	bad("{a=~\"x\\\\\"}", 5, "ends with '\\'");
	bad("{a!~\"*x\"}", 5, "bad regular expression");
	bad("{a=~\"x{2\"}", 5, "bad regular expression");
	/* the raw NUL byte */
	{
		const char t[] = "{a=\"x\0y\"}";
		pe_sel_error err;
		pe_sel *s = pe_sel_parse(t, sizeof(t) - 1, &err);
		CHECK(!s && err.pos == 6 && strstr(err.msg, "NUL"), "raw NUL: %s", err.msg);
		pe_sel_free(s);
	}
	/* caps */
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[PE_SEL_MAX_TEXT] = '}';
	big[PE_SEL_MAX_TEXT + 1] = 0;
	bad(big, PE_SEL_MAX_TEXT + 1, "at most 4096");
	n = (size_t)snprintf(many, sizeof(many), "{");
	for (i = 0; i <= PE_SEL_MAX_MATCHERS; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "a=\"\",");
	snprintf(many + n, sizeof(many) - n, "}");
	bad(many, 2 + 5 * PE_SEL_MAX_MATCHERS, "more than 64 matchers");
	n = (size_t)snprintf(re, sizeof(re), "{a=~\"");
	memset(re + n, 'x', PE_SEL_MAX_REGEX + 1);
	snprintf(re + n + PE_SEL_MAX_REGEX + 1, sizeof(re) - n - PE_SEL_MAX_REGEX - 1, "\"}");
	bad(re, 5, "at most 1024");
	/* what is allowed stays allowed */
	CHECK(sel("{a=~\"[]x]\"}") == 0 && sel("{a=~\"x{0,3}y\"}") == 0 &&
	      sel("{a=~\"([[:alpha:]]+)?\"}") == 1 && sel("{a=~\"a{30}\"}") == 0 &&
	      sel("{a=~\"(a{5}|b{6}){89}|c+d+e+f+g+h+i+j+k+l+m+n+o+p+\"}") == 0 &&
	      sel("{a=~\"(release|hotfix)-[0-9]+\\\\.[0-9]+(-rc[0-9]*)?\"}") == 0 &&
	      sel("{a=~\"(^|x)(a|b?)c?\"}") == 1 && sel("{a=~\"ci-[0-9]{1,4}|build-.*\"}") == 0,
	      "allowed regular expressions");
}

static void time_ok(const char *text, int64_t want)
{
	pe_sel_error err;
	int64_t got = -1;
	int rc = pe_sel_time(text, 1700000000, &got, &err);

	CHECK(rc == 0 && got == want, "time %s: rc %d got %lld want %lld (%s)", text, rc,
	      (long long)got, (long long)want, err.msg);
}

static void time_bad(const char *text, size_t pos, const char *what)
{
	pe_sel_error err;
	int64_t got;
	int rc = pe_sel_time(text, 1700000000, &got, &err);

	CHECK(rc < 0 && err.pos == pos && strstr(err.msg, what),
	      "time %s: rc %d pos %zu want %zu: %s", text, rc, err.pos, pos, err.msg);
}

static void test_times(void)
{
	time_ok("0", 0);
	time_ok("1714564800", 1714564800);
	time_ok("7d", 1700000000 - 7 * 86400);
	time_ok("36h", 1700000000 - 36 * 3600);
	time_ok("1h30m", 1700000000 - 5400);
	time_ok("2w", 1700000000 - 14 * 86400);
	time_ok("90s", 1700000000 - 90);
	time_ok("2024-05-01T12:00:00Z", 1714564800);
	time_ok("2024-05-01t12:00:00z", 1714564800);
	time_ok("2024-05-01 12:00:00.123456Z", 1714564800);
	time_ok("2024-05-01T14:30:00+02:30", 1714564800);
	time_ok("2024-05-01T09:00:00-03:00", 1714564800);
	time_ok("2024-05-01", 1714521600);
	time_ok("2024-02-29", 1709164800);
	time_ok("1970-01-01T00:00:00Z", 0);
	time_ok("1969-12-31T23:59:59Z", -1);
	time_bad("", 1, "expected a time");
	time_bad("abc", 1, "expected a time");
	time_bad("7x", 2, "expected a time");
	time_bad("7dd", 3, "expected a number in the duration");
	time_bad("7d5", 4, "expected a unit");
	time_bad("99999999999999999999", 19, "out of range");
	time_bad("2024-13-01", 6, "month");
	time_bad("2023-02-29", 9, "day of that month");
	time_bad("2024-04-31", 9, "day of that month");
	time_bad("2024/05/01", 5, "'-' after the year");
	time_bad("2024-05-01X", 11, "'T' between");
	time_bad("2024-05-01T24:00:00Z", 12, "hour");
	time_bad("2024-05-01T12:60:00Z", 15, "minutes");
	time_bad("2024-05-01T12:00Z", 17, "seconds");
	time_bad("2024-05-01T12:00:00", 20, "'Z' or an offset");
	time_bad("2024-05-01T12:00:00.Z", 21, "digits after '.'");
	time_bad("2024-05-01T12:00:00+2", 20, "offset");
	time_bad("2024-05-01T12:00:00Z!", 21, "end of the time");
	time_bad("100000000000w", 1, "out of range");
	time_bad("1000000w", 1, "more than 100 years");
	time_bad("2024-05-01T12:00:00.0000000000000000000000000000000000000000000000000000000Z", 65,
		 "bytes");
}

int main(void)
{
	test_operators();
	test_unicode();
	test_errors();
	test_times();
	return check_done("engine-selector");
}
