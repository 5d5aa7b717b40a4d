"""Chance baselines for an observed overlap: exact hypergeometric nulls, uniform and within strata.

The setting: a pool of N items (e.g. the 4,993 bugs of ARVO's first release). A benchmark holds K of
them and a training set n of them; they share x. If the two sets were drawn independently of each other
from the pool, how many would they share by chance?

- **Uniform** (`uniform_baseline`): the train set is a uniformly random n-subset of the pool, so the
  shared count X ~ Hypergeometric(N, K, n) (scipy.stats.hypergeom).
- **Within strata** (`stratified_baseline`): the train set is a uniformly random n_s-subset of each
  stratum s (e.g. an OSS-Fuzz project) with its observed size. X = Σ X_s with independent
  X_s ~ Hypergeometric(N_s, K_s, n_s); the exact pmf of X is the convolution of the per-stratum pmfs.
  This is the right null when both sets favour the same projects: two sets that both love libxml2
  share libxml2 bugs without one copying the other.
- **Permutation cross-check** (`permutation_check`): a seeded Monte Carlo that shuffles train
  membership within strata and counts the shared items; it must agree with the exact result within
  Monte Carlo error. `shuffled_memberships`/`permutation_distribution` are the same shuffle for any
  statistic that has no closed form.
- **Inclusion test** (`inclusion_test`, SWE training sets): within each repo, does the training set
  contain benchmark PRs at the rate it contains a reference set of comparable PRs? Same machinery with
  pool = benchmark ∪ reference PRs of the repo, "bench" = the benchmark PRs, "train" = the PRs the
  training set contains.

Every result is a JSON-ready dict (Python ints/floats/None only). Field conventions, shared by all:

- `expected` = E[X], `sd` = sd(X), `excess` = x − E[X], `ratio` = x / E[X] (None when E[X] = 0).
- `z` = (x − E[X]) / sd. When sd = 0 (the null is a single value) `z` is 0.0 if x equals that value and
  None otherwise; the exact tails below still say everything. z is never NaN or infinite.
- `p_upper` = P(X ≥ x) and `p_lower` = P(X ≤ x), exact. `mid_p_upper` = P(X > x) + ½P(X = x) and
  `mid_p_lower` = P(X < x) + ½P(X = x). For x outside the null's support the tails are 0 or 1 exactly
  and a note says the observation is impossible under the null.
- `expected_interval` = [lo, hi], the central `interval_level` (95 %) range of the chance count: lo is
  the smallest k with P(X ≤ k) ≥ 2.5 %, hi the smallest k with P(X ≤ k) ≥ 97.5 % (the equal-tailed
  quantiles of the null, as scipy's `ppf`). Chance alone lands in it at least 95 % of the time.
- `notes` lists, in words, every degenerate case met (empty pool, no train or bench items, a point-mass
  null, an impossible observation, skipped strata).

Degenerate inputs give defined results, never NaN or an exception: K = 0 or n = 0 (X ≡ 0), N = 1,
N = 0 (everything 0), x > min(K, n) (impossible: p_upper = 0, p_lower = 1), a stratum where everything
is shared (N_s = K_s = n_s: X_s ≡ N_s), strata with n_s = 0 (skipped: they contribute 0 with
certainty). Counts that cannot describe a pool at all (negative, K > N, n > N, not integers) raise
`InputError`.

Where the parts live (all re-exported here): `strata` (per-stratum counts and their checks), `exact` (the
exact pmfs, `uniform_baseline`, `stratified_baseline`), `permutation` (the seeded shuffles),
`inclusion` (`inclusion_test`).
"""

from .exact import (
    LEVEL,
    NullDistribution,
    convolve,
    hypergeom_moments,
    hypergeom_null,
    stratified_baseline,
    uniform_baseline,
)
from .inclusion import inclusion_test
from .permutation import (
    AGREEMENT_SE,
    PERMUTATION_METHOD,
    permutation_check,
    permutation_distribution,
    shuffled_memberships,
    simulate_shared_counts,
)
from .strata import UNKNOWN, Stratum, as_strata, count_strata, stratum_label

__all__ = [
    "AGREEMENT_SE", "LEVEL", "PERMUTATION_METHOD", "UNKNOWN", "NullDistribution", "Stratum", "as_strata",
    "convolve", "count_strata", "hypergeom_moments", "hypergeom_null", "inclusion_test", "permutation_check",
    "permutation_distribution", "shuffled_memberships", "simulate_shared_counts", "stratified_baseline",
    "stratum_label", "uniform_baseline",
]
