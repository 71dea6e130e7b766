// Pearson's chi-square goodness-of-fit for the spec_decode distribution tests: the statistic, and
// its critical value at a given significance computed from the chi-square distribution itself
// (regularized lower incomplete gamma by its power series, inverted by bisection), with the
// Wilson–Hilferty approximation as an independent cross-check.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace plinth::test {

/// P(a, x): the regularized lower incomplete gamma function, by the series
///   P(a, x) = x^a e^-x / Γ(a + 1) · Σ_n x^n / ((a + 1)(a + 2)···(a + n)).
inline double regularized_gamma_p(double a, double x) {
  if (x <= 0) return 0.0;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (term < sum * 1e-16) break;
  }
  return std::exp(a * std::log(x) - x - std::lgamma(a + 1.0)) * sum;
}

/// The chi-square CDF with `df` degrees of freedom: P(df / 2, x / 2).
inline double chi_square_cdf(double x, double df) {
  return regularized_gamma_p(df / 2.0, x / 2.0);
}

/// The x with chi_square_cdf(x, df) = q, by bisection over [0, df + 20 standard deviations + 20]
/// (far above any quantile used here, and small enough for the series not to overflow).
inline double chi_square_quantile(double q, double df) {
  double lo = 0.0, hi = df + 20.0 * std::sqrt(2.0 * df) + 20.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (chi_square_cdf(mid, df) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Φ⁻¹(q), the standard normal quantile, by bisection of Φ(z) = erfc(-z / √2) / 2.
inline double normal_quantile(double q) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Wilson–Hilferty (1931): (X / df)^(1/3) is nearly normal with mean 1 - 2 / (9 df) and variance
/// 2 / (9 df), so the q-quantile is about df · (1 - 2 / (9 df) + z_q · sqrt(2 / (9 df)))³.
inline double wilson_hilferty_quantile(double q, double df) {
  const double v = 2.0 / (9.0 * df);
  const double c = 1.0 - v + normal_quantile(q) * std::sqrt(v);
  return df * c * c * c;
}

/// The critical value of a test at significance `alpha`: the (1 - alpha) quantile.
inline double chi_square_critical(double alpha, double df) {
  return chi_square_quantile(1.0 - alpha, df);
}

/// Σ (observed - expected)² / expected over the cells, expected = n · probs[i]. Throws when a cell
/// expects fewer than 5 counts (the chi-square approximation of the statistic would not hold).
inline double chi_square_statistic(const std::vector<double>& observed,
                                   const std::vector<double>& probs) {
  if (observed.size() != probs.size()) throw std::invalid_argument("cells differ");
  double n = 0;
  for (double o : observed) n += o;
  double stat = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double e = n * probs[i];
    if (e < 5.0) throw std::invalid_argument("a cell expects fewer than 5 counts");
    stat += (observed[i] - e) * (observed[i] - e) / e;
  }
  return stat;
}

}  // namespace plinth::test
