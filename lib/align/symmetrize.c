/* symmetrize.c: two directions' links made one alignment; see
 * symmetrize.h. */
#include <string.h>
#include "symmetrize.h"

static const char *const names[] = {
	"forward", "reverse", "intersect", "union", "grow-diag-final-and",
	"posterior",
};

int wa_sym_parse(const char *name)
{
	for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
		if (strcmp(name, names[k]) == 0)
			return k;
	return -1;
}

const char *wa_sym_name(int sym)
{
	return names[sym];
}

/*
 * The grid: cell (i, j) at i (m + 1) + j holds the bits below; row n
 * (cell (n, j)) says whether target word j has a link in the result,
 * column m (cell (i, m)) whether source word i has.
 */
enum { FWD = 1, REV = 2, OUT = 4 };

static void add(unsigned char *g, int n, int m, int i, int j)
{
	g[i * (m + 1) + j] |= OUT;
	g[n * (m + 1) + j] = 1;
	g[i * (m + 1) + m] = 1;
}

/* Whether source word i or target word j has no link in the result. */
static int either_free(const unsigned char *g, int n, int m, int i, int j)
{
	return !g[n * (m + 1) + j] || !g[i * (m + 1) + m];
}

static void grow_diag(unsigned char *g, int n, int m)
{
	static const int di[8] = { -1, 0, 1, 0, -1, -1, 1, 1 };
	static const int dj[8] = { 0, -1, 0, 1, -1, 1, -1, 1 };
	int added = 1;

	while (added) {
		added = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < m; j++) {
				if (!(g[i * (m + 1) + j] & OUT))
					continue;
				for (int k = 0; k < 8; k++) {
					int a = i + di[k], b = j + dj[k];
					unsigned char c;

					if (a < 0 || a >= n || b < 0 || b >= m)
						continue;
					c = g[a * (m + 1) + b];
					if ((c & (FWD | REV)) && !(c & OUT) &&
					    either_free(g, n, m, a, b)) {
						add(g, n, m, a, b);
						added = 1;
					}
				}
			}
	}
}

/* final-and for the links of one direction (bit) */
static void final_and(unsigned char *g, int n, int m, int bit)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			if ((g[i * (m + 1) + j] & bit) && !g[n * (m + 1) + j] &&
			    !g[i * (m + 1) + m])
				add(g, n, m, i, j);
}

int wa_symmetrize(int sym, const int32_t *fwd, int m, const int32_t *rev,
		  int n, unsigned char *grid, int32_t *ij)
{
	int k = 0;

	memset(grid, 0, (size_t)(n + 1) * (m + 1));
	for (int j = 0; j < m; j++)
		if (fwd[j] >= 0 && fwd[j] < n)
			grid[fwd[j] * (m + 1) + j] |= FWD;
	for (int i = 0; i < n; i++)
		if (rev[i] >= 0 && rev[i] < m)
			grid[i * (m + 1) + rev[i]] |= REV;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++) {
			unsigned char c = grid[i * (m + 1) + j];
			int in = sym == WA_SYM_FORWARD ? c & FWD :
				 sym == WA_SYM_REVERSE ? c & REV :
				 sym == WA_SYM_UNION ? c & (FWD | REV) :
				 (c & (FWD | REV)) == (FWD | REV);

			if (in)
				add(grid, n, m, i, j);
		}
	if (sym == WA_SYM_GDFA) {
		grow_diag(grid, n, m);
		final_and(grid, n, m, FWD);
		final_and(grid, n, m, REV);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			if (grid[i * (m + 1) + j] & OUT) {
				ij[2 * k] = i;
				ij[2 * k + 1] = j;
				k++;
			}
	return k;
}

int wa_symmetrize_posterior(const float *fwd, int m, const float *rev,
			    int n, double threshold, int32_t *ij)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++) {
			double f = fwd[(size_t)j * (n + 1) + i + 1];
			double r = rev[(size_t)i * (m + 1) + j + 1];

			if ((f + r) / 2 >= threshold && k < n + m) {
				ij[2 * k] = i;
				ij[2 * k + 1] = j;
				k++;
			}
		}
	return k;
}
