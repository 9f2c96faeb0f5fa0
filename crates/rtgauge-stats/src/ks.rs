//! The Kolmogorov distribution behind every two-sample Kolmogorov–Smirnov test of rtgauge
//! (the comparison of two runs, and the extreme-value estimate's check that both halves of a
//! run's maxima come from one distribution).

/// Asymptotic p-value of the two-sample statistic `d` for sample sizes `n_a`, `n_b`, with the
/// small-sample correction of Stephens (Numerical Recipes §14.3).
pub fn ks_p_value(d: f64, n_a: u64, n_b: u64) -> f64 {
    if n_a == 0 || n_b == 0 {
        return 1.0;
    }
    let ne = (n_a as f64 * n_b as f64) / (n_a as f64 + n_b as f64);
    let sq = ne.sqrt();
    kolmogorov_q((sq + 0.12 + 0.11 / sq) * d)
}

/// Q_KS(λ) = 2 Σ_{j≥1} (−1)^{j−1} e^{−2 j² λ²}: the survival function of the Kolmogorov
/// distribution.
pub fn kolmogorov_q(lambda: f64) -> f64 {
    // Below 0.2 the alternating series converges too slowly to sum, and Q is 1 to 1e-15.
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for j in 1..=100 {
        let term = (-2.0 * (j * j) as f64 * lambda * lambda).exp();
        sum += sign * term;
        if term < 1e-12 * sum.abs() {
            break;
        }
        sign = -sign;
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// The two-sample statistic D = max |F_a − F_b| of two samples of exact values.
pub fn two_sample_d(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        // Step past every copy of the next value in both samples before comparing.
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sample_d_of_disjoint_samples_is_one_and_of_equal_samples_zero() {
        assert_eq!(two_sample_d(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        assert_eq!(two_sample_d(&[1.0, 2.0, 2.0], &[2.0, 1.0, 2.0]), 0.0);
        assert!((two_sample_d(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]) - 0.5).abs() < 1e-12);
    }
}
