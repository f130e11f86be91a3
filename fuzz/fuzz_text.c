/*
 * fuzz_text.c: libFuzzer target for the text form of streams (tensordump
 * -r; make fuzz).  Any input is read as text without a crash, a leak or
 * undefined behaviour, and every record that parses prints and parses
 * back the same, bit for bit.
 */
#include <stdint.h>
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_text_input(data, size);
	return 0;
}
