/* SPDX-License-Identifier: Apache-2.0 */
#include "placement/cpus.h"

bool nt_cpus_same_core(const nt_topology *t, int a, int b)
{
	if (a == b)
		return true;
	if (!t->cpu_core || !t->cpu_package || a < 0 || b < 0 || a >= t->ncpus_possible ||
	    b >= t->ncpus_possible)
		return false;
	if (t->cpu_core[a] < 0 || t->cpu_package[a] < 0)
		return false;
	return t->cpu_core[a] == t->cpu_core[b] && t->cpu_package[a] == t->cpu_package[b];
}

bool nt_cpus_sibling_of_any(const nt_topology *t, int cpu, const nt_cpuset *set)
{
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		if (c != cpu && nt_cpus_same_core(t, c, cpu))
			return true;
	return false;
}

int nt_cpus_siblings_last(const nt_topology *t, const nt_cpuset *set, int *out)
{
	int n = 0, first = 0;
	/* Pass 1: the lowest CPU of each core; pass 2: the others. A core is
	 * at most a handful of threads and a node a few hundred CPUs, so the
	 * quadratic look-back stays small. */
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		bool seen = false;
		for (int i = 0; i < n && !seen; i++)
			seen = nt_cpus_same_core(t, out[i], c);
		if (!seen)
			out[n++] = c;
	}
	first = n;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		bool taken = false;
		for (int i = 0; i < first && !taken; i++)
			taken = out[i] == c;
		if (!taken)
			out[n++] = c;
	}
	return n;
}
