/*
 * fuzz-selector - libFuzzer target over the profile selector and the time
 * bounds (engine/selector.c), the text every /api/v1/query,
 * /series, /diff and /profiles?q= request hands the daemon: the input is
 * parsed as a selector (and, when it parses, matched against labels, some
 * taken from the input itself) and as a time. A parse either succeeds or
 * names a position inside the text (or just past its end). A plain main
 * replays tests/fuzz-selector/ in every make check (tests/fuzz-selector.sh).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "branch", "host", "a", "" };
	const char *values[4] = { "main", "ci-7", "", "x" };
	pe_labels l = { 7, "smoke", "ci-7", 4, keys, values };
	pe_sel_error err;
	pe_sel *s;
	char *text;
	int64_t t;

	if (size > 2 * PE_SEL_MAX_TEXT)
		return 0;
	s = pe_sel_parse((const char *)data, size, &err);
	if (!s && (err.pos > size + 1 || !err.msg[0]))
		__builtin_trap();
	if (!(text = malloc(size + 1))) {
		pe_sel_free(s);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = 0;
	if (s) {
		size_t i;
		/* every matcher's value as a label value too */
		for (i = 0; i < pe_sel_count(s) && i < 3; i++) {
			const char *lbl;
			int op;
			pe_sel_matcher(s, i, &lbl, &op, &values[i]);
			if (op < PE_SEL_EQ || op > PE_SEL_NRE || !lbl[0])
				__builtin_trap();
		}
		values[3] = text;
		(void)pe_sel_match(s, &l);
		pe_sel_free(s);
	}
	if (pe_sel_time(text, 1700000000, &t, &err) < 0 && (err.pos > size + 1 || !err.msg[0]))
		__builtin_trap();
	free(text);
	return 0;
}
