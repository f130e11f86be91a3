/*
 * fuzz_config.c: libFuzzer target for the model.config parser (make
 * fuzz).  Any text parses or is refused without a crash, a leak or
 * undefined behaviour; what parses formats to text that parses to the
 * same keys and values, and formats to the same text again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config a = { 0 }, b = { 0 };
	char *ta, *tb;
	size_t na, nb;
	int i;

	if (config_parse(&a, (const char *)data, size, "fuzz") < 0) {
		config_free(&a);
		return 0;
	}
	if (!(ta = config_format(&a, &na)) ||
	    config_parse(&b, ta, na, "again") < 0 || a.n != b.n ||
	    !(tb = config_format(&b, &nb)) || na != nb || memcmp(ta, tb, na))
		abort();
	for (i = 0; i < a.n; i++)
		if (strcmp(a.key[i], b.key[i]) || strcmp(a.val[i], b.val[i]) ||
		    strcmp(config_get(&b, a.key[i]), a.val[i]))
			abort();
	free(ta);
	free(tb);
	config_free(&a);
	config_free(&b);
	return 0;
}
