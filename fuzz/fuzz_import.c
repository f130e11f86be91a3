/*
 * fuzz_import.c: libFuzzer target for the readers of other toolkits'
 * model files (lib/import, make fuzz): any bytes read as a zip archive
 * (every member extracted), as a .npy array, as a Marian .bin file and
 * as Marian's YAML are read or refused without a crash, a leak or
 * undefined behaviour; what reads holds itself together: a member's
 * extracted length is its central size, an array's data lies inside
 * the input and fills its shape (an intgemm8 item's with its
 * multiplier, positive and finite), every YAML entry has its items;
 * an .npz's items opened by their headers alone (marian_items_open) are
 * the ones read whole, and each loads (or is refused) and lets go.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "import/marian_items.h"
#include "import/npy.h"
#include "import/yaml.h"
#include "import/zip.h"

static void inside(const void *p, size_t n, const uint8_t *d, size_t size)
{
	if (n && ((const uint8_t *)p < d ||
		  (const uint8_t *)p + n > d + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct marian_items mi;
	struct yaml y;
	struct npy a;
	struct zip z;
	int i, k;

	if (zip_open(&z, data, size) == 0) {
		for (i = 0; i < z.count; i++) {
			size_t len;
			void *p = zip_extract(&z, i, &len);

			if (p && (len != z.m[i].usize || ((char *)p)[len]))
				abort();
			free(p);
		}
		zip_close(&z);
	}
	if (npy_parse(&a, data, size) == 0)
		inside(a.data, a.nbytes, data, size);
	if (marian_items_read_bin(&mi, data, size) == 0) {
		for (i = 0; i < mi.n; i++) {
			size_t es = mi.it[i].dtype == NPY_F32 ? 4 :
				    mi.it[i].dtype == NPY_F16 ? 2 : 1;
			/* intgemm8: the values, then their multiplier */
			int i8 = mi.it[i].dtype == MARIAN_INTGEMM8;

			inside(mi.it[i].data, mi.it[i].count * es + 4 * i8,
			       data, size);
			if (i8 && !(mi.it[i].intgemm_mult > 0 &&
				    mi.it[i].intgemm_mult < INFINITY))
				abort();
		}
		marian_items_free(&mi);
	}
	if (marian_items_read_npz(&mi, data, size) == 0) {
		for (i = 0; i < mi.n; i++)
			if (!mi.it[i].data ||
			    marian_item(&mi, mi.it[i].name) != &mi.it[i])
				abort();
		marian_items_free(&mi);
	}
	if (marian_items_open(&mi, data, size) == 0) {
		for (i = 0; i < mi.n; i++) {
			const struct marian_item *it = &mi.it[i];
			size_t es = it->dtype == NPY_F32 ? 4 :
				    it->dtype == NPY_F16 ? 2 : 1;

			if (marian_item_load(&mi, it) < 0)
				continue;
			if (!it->own)	/* a stored member's, or a .bin's */
				inside(it->data, it->count * es, data, size);
			else if (it->data < (const uint8_t *)it->own)
				abort();
			marian_item_unload(&mi, it);
		}
		marian_items_free(&mi);
	}
	if (yaml_parse(&y, (const char *)data, size, "fuzz") == 0) {
		for (i = 0; i < y.n; i++) {
			if (!y.e[i].list && y.e[i].n != 1)
				abort();
			for (k = 0; k < y.e[i].n; k++)
				if (!y.e[i].v[k])
					abort();
			if (yaml_get(&y, y.e[i].key) != &y.e[i])
				abort();
		}
		yaml_free(&y);
	}
	return 0;
}
