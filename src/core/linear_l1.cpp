// Coordinate descent Newton for the L1-regularised L2-loss linear SVM (LIBLINEAR -s 5):
//
//     min_w ‖w‖₁ + Σ_i C_i max(0, 1 − y_i wᵀx_i)²
//
// (Yuan, Chang, Hsieh & Lin 2010, JMLR 11, "A comparison of optimization methods and software
// for large-scale L1-regularized linear classification", section 4.1.2 (CDN); Fan et al. 2008,
// JMLR 9, appendix). One weight at a time in a random order: the one-variable problem's
// second-order model with the L1 term gives a Newton direction, shortened by halving until the
// sufficient decrease (σ = 0.01) holds, which a cheap upper bound of the loss's change usually
// certifies without a pass over the column. Weights at 0 whose subgradient range holds 0 by a
// margin are shrunk from later passes; the iteration stops when the summed violation of a pass
// is at most `tol` times the first pass's, after a last pass over every weight. The rules and
// constants are LIBLINEAR 2.50's (linear.cpp, solve_l1r_l2_svc).
#include "linear.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace svmkit::linear {

namespace {

// Sufficient decrease constant and line-search halvings at most (LIBLINEAR's).
constexpr double SIGMA = 0.01;
constexpr i64 MAX_HALVINGS = 20;
// A direction shorter than this is not taken; the curvature's floor (LIBLINEAR's).
constexpr double STEP_MIN = 1e-12;
constexpr double CURVATURE_MIN = 1e-12;

// X's columns: values y_i x_ij at rows[p] for p in pointers[j] … pointers[j + 1].
struct Columns {
    const double *values;
    const i64 *rows;
    const i64 *pointers;
};

// b_i = 1 − y_i wᵀx_i from the columns.
void margins(const Columns &X, const double *w, i64 n_weights, double *b, i64 n) {
    std::fill(b, b + n, 1.0);
    for (i64 j = 0; j < n_weights; ++j)
        if (w[j] != 0.0)
            for (i64 p = X.pointers[j]; p < X.pointers[j + 1]; ++p)
                b[X.rows[p]] -= w[j] * X.values[p];
}

SVMKIT_CLONES i64 solve(const Columns &X, const double *c, i64 n, const Stop &stop, double *w, i64 n_weights) {
    const double *values = X.values;
    const i64 *rows = X.rows, *pointers = X.pointers;
    Xorshift random(stop.seed);
    std::fill(w, w + n_weights, 0.0);
    std::vector<double> b(size_t(n), 1.0);
    std::vector<double> curvature_bound(size_t(n_weights), 0.0);  // Σ_i C_i x_ij², which bounds the loss's curvature
    for (i64 j = 0; j < n_weights; ++j)
        for (i64 p = pointers[j]; p < pointers[j + 1]; ++p)
            curvature_bound[j] += c[rows[p]] * values[p] * values[p];
    ActiveSet weights(n_weights);
    RelativeStop relative{stop.tol};
    i64 it = 0;
    while (it < stop.max_iter) {
        const double shrink_above = relative.g_max_old / double(n);
        weights.pass(random, [&](i64 j, i64, i64) LINEAR_INLINE_LAMBDA {
            double g_loss = 0.0, h = 0.0;
            for (i64 p = pointers[j]; p < pointers[j + 1]; ++p) {
                const i64 i = rows[p];
                if (b[i] > 0.0) {
                    const double t = c[i] * values[p];
                    g_loss -= t * b[i];
                    h += t * values[p];
                }
            }
            g_loss *= 2.0;
            h = py_max(2.0 * h, CURVATURE_MIN);
            const double gp = g_loss + 1.0, gn = g_loss - 1.0;
            if (w[j] == 0.0 && gp > shrink_above && gn < -shrink_above)
                return false;
            relative.add(l1_violation(gp, gn, w[j]));
            double d = l1_step(gp, gn, h, w[j]);
            if (std::fabs(d) < STEP_MIN)
                return true;
            double delta = std::fabs(w[j] + d) - std::fabs(w[j]) + g_loss * d;
            double d_old = 0.0;
            double loss_old = 0.0;
            i64 halvings = 0;
            while (halvings < MAX_HALVINGS) {
                const double d_diff = d_old - d;
                const double cond = std::fabs(w[j] + d) - std::fabs(w[j]) - SIGMA * delta;
                if (curvature_bound[j] * d * d + g_loss * d + cond <= 0.0) {
                    for (i64 p = pointers[j]; p < pointers[j + 1]; ++p)
                        b[rows[p]] += d_diff * values[p];
                    break;
                }
                double loss_new = 0.0;
                for (i64 p = pointers[j]; p < pointers[j + 1]; ++p) {
                    const i64 i = rows[p];
                    if (halvings == 0 && b[i] > 0.0)
                        loss_old += c[i] * b[i] * b[i];
                    const double b_new = b[i] + d_diff * values[p];
                    b[i] = b_new;
                    if (b_new > 0.0)
                        loss_new += c[i] * b_new * b_new;
                }
                if (cond + loss_new - loss_old <= 0.0)
                    break;
                d_old = d;
                d *= 0.5;
                delta *= 0.5;
                ++halvings;
            }
            w[j] += d;
            if (halvings >= MAX_HALVINGS)  // b drifted over the trials: recompute it
                margins(X, w, n_weights, b.data(), n);
            return true;
        });
        if (relative.done(it++, weights))
            break;
    }
    return it;
}

i64 l1_svc(Vec<const double> values, Vec<const i64> rows, Vec<const i64> pointers, Vec<const double> c,
           const Stop &stop, Vec<double> w) {
    const i64 n = i64(c.shape(0)), n_weights = i64(w.shape(0));
    if (i64(pointers.shape(0)) != n_weights + 1)
        throw std::invalid_argument("pointers needs one entry per weight plus one");
    if (values.shape(0) != rows.shape(0))
        throw std::invalid_argument("values and rows differ in length");
    check_compressed(pointers, rows, n, {"pointers", "column", "row", "rows"});
    return solve(Columns{values.data(), rows.data(), pointers.data()}, c.data(), n, stop, w.data(), n_weights);
}

}  // namespace

void register_l1(nb::module_ m) {
    m.def("l1_svc", &l1_svc, nb::arg("values"), nb::arg("rows"), nb::arg("pointers"), nb::arg("c"), nb::arg("stop"),
          nb::arg("w"), nb::call_guard<nb::gil_scoped_release>(),
          "Minimise ‖w‖₁ + Σ_i C_i max(0, 1 − y_i wᵀx_i)² (LIBLINEAR -s 5) by coordinate descent Newton over "
          "the CSC columns of the y_i x_i (values, rows, pointers; C_i per row in c); writes w (one weight per "
          "column), returns the passes. Stops when a pass's summed violation is ≤ tol times the first pass's, "
          "after a last pass over every weight.");
}

}  // namespace svmkit::linear
