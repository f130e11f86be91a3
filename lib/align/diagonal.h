/*
 * diagonal.h: the alignment prior of fast_align (Dyer, Chahuneau and
 * Smith 2013), a reparameterised IBM Model 2.  Target word j of m (from
 * 1) is aligned to the NULL word with probability p0, or to source word i
 * of n (from 1) with
 *
 *	(1 - p0) exp(lambda h(i, j, m, n)) / Z(j, m, n, lambda),
 *	h(i, j, m, n) = -| i / n - j / m |,
 *	Z(j, m, n, lambda) = sum over i = 1..n of exp(lambda h(i, j, m, n)),
 *
 * lambda >= 0 the tension (0: uniform; larger, nearer the diagonal).
 */
#ifndef ATTN_DIAGONAL_H
#define ATTN_DIAGONAL_H

/* h(i, j, m, n); i from 1 to n, j from 1 to m. */
static inline double wa_diag_h(int i, int j, int m, int n)
{
	double d = (double)i / n - (double)j / m;

	return d < 0 ? d : -d;
}

/*
 * Z(j, m, n, lambda) in closed form: the source positions on either side
 * of j n / m make two geometric series of ratio exp(-lambda / n).
 */
double wa_diag_z(int j, int m, int n, double lambda);

/*
 * d log Z / d lambda = sum over i of h(i, ...) exp(lambda h(i, ...)) / Z,
 * the expected h under the prior given a non-NULL link, in closed form
 * (the two series' sums of k r^k); for the tension's M-step.
 */
double wa_diag_dlogz(int j, int m, int n, double lambda);

/*
 * prior [n + 1]: the probabilities of target word j of m being aligned to
 * the NULL word (prior[0]) and to source word i of n (prior[i]): as above
 * with diagonal, else IBM Model 1's uniform 1 / (n + 1) for each.
 */
void wa_diag_prior(int diagonal, double lambda, double p0, int j, int m,
		   int n, double *prior);

#endif
