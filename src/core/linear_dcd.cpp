// Dual coordinate descent for linear SVMs (Hsieh et al. 2008; Ho & Lin 2012), LIBLINEAR's -s 1, 3, 12, 13.
//
// Classification (the soft-margin SVM is L2-regularised hinge loss; the dual as Hsieh et al. 2008, (4)):
//
//     min_α ½ αᵀ(Q + D)α − 1ᵀα,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j x_iᵀx_j,
//
// hinge loss: U_i = C_i, D_ii = 0; squared hinge: U_i = ∞, D_ii = 1/(2C_i); w = Σ y_i α_i x_i.
// Regression (ε-insensitive loss), with β_i = α_i − α*_i:
//
//     min_β ½ βᵀ(Q + D)β − yᵀβ + ε‖β‖₁,  −U_i ≤ β_i ≤ U_i,  Q_ij = x_iᵀx_j, w = Σ β_i x_i,
//
// with U, D as above. One coordinate at a time in a random order, with LIBLINEAR's shrinking;
// the intercept is the weight of the constant feature `bias` (regularised, as LIBLINEAR's -B).
#include "linear.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace svmkit::linear {

namespace {

// A coordinate step smaller than this is skipped (LIBLINEAR's 1e-12).
constexpr double STEP_MIN = 1e-12;

// How many coordinates ahead a pass asks for a row's memory: a pass over a permutation touches
// every row in an order the hardware prefetcher cannot guess. On a9a, CSR or dense, a visit waits
// least at 4 ahead (2 or 8 wait longer).
constexpr i64 AHEAD = 4;

// The state of one dual: a record of `width` entries per row, the variable (0) beside
// (Q + D)_ii (1) so that an update reads one cache line for both (regression keeps y_i at 2),
// and the variables' order, the active ones first.
struct Dual {
    std::vector<double> record;
    ActiveSet variables;
    const std::int32_t *group;
    i64 width;

    Dual(const RowTables &t, double bias, i64 width_)
        : variables(i64(t.norms.shape(0))), group(t.group.data()), width(width_) {
        const i64 n = i64(t.norms.shape(0));
        record.assign(size_t(n * width), 0.0);
        const double *norms = t.norms.data(), *diag = t.diag.data();
        for (i64 i = 0; i < n; ++i)
            record[size_t(i * width + 1)] = norms[i] + bias * bias + diag[group[i]];
    }

    // Start from the variables `start` (feasible), w = Σ_i s_i·start_i·x_i (s_i = sign[group[i]],
    // or 1 for regression): the warm start of an update (new rows at 0, forgotten ones removed).
    template <class L> void start(const L &x, const double *start, const double *sign, double *w) {
        for (i64 i = 0; i < i64(variables.index.size()); ++i) {
            record[size_t(i * width)] = start[i];
            if (start[i] != 0.0)
                x.axpy(sign ? start[i] * sign[group[i]] : start[i], w, i);
        }
    }

    // Ask for the memory of the variable AHEAD positions on: its record, group and row (and,
    // for CSR rows, the row pointer of the one after).
    template <class L> LINEAR_INLINE void ask_ahead(const L &x, i64 s, i64 active) const {
        if (s + AHEAD >= active)
            return;
        const i64 *index = variables.index.data();
        const i64 k = index[s + AHEAD];
        LINEAR_PREFETCH(record.data() + k * width);
        LINEAR_PREFETCH(record.data() + (k + 1) * width - 1);
        LINEAR_PREFETCH(group + k);
        if (s + 2 * AHEAD < active)
            x.ask_pointer(index[s + 2 * AHEAD]);
        x.ask(k);
    }
};

// Compiled once, without SVMKIT_CLONES: the AVX-512 clone's row dot is slower on rows in cache
// (diabetes' regression dual, digits) and no faster on a9a, where a pass waits on memory.
template <class L>
i64 classify(const L &rows, const RowTables &t, const Stop &stop, double *w, double *alpha) {
    const L x = rows;  // a local copy: the updates of w cannot change its bias or pointers
    const i64 n = i64(t.norms.shape(0));
    const double *sign = t.sign.data(), *upper = t.upper.data(), *diag = t.diag.data();
    Xorshift random(stop.seed);
    Dual dual(t, x.bias, 2);
    double *record = dual.record.data();
    if (stop.start)
        dual.start(x, alpha, sign, w);
    double pg_max_old = inf, pg_min_old = -inf;
    i64 it = 0;
    while (it < stop.max_iter) {
        double pg_max = -inf, pg_min = inf;
        dual.variables.pass(random, [&](i64 i, i64 s, i64 active) LINEAR_INLINE_LAMBDA {
            dual.ask_ahead(x, s, active);
            const std::int32_t g = dual.group[i];
            const double yi = sign[g], ui = upper[g], a = record[i * 2];
            const double G = yi * x.dot(w, i) - 1.0 + a * diag[g];
            double PG = 0.0;
            if (a == 0.0) {
                if (G > pg_max_old)
                    return false;
                if (G < 0.0)
                    PG = G;
            } else if (a == ui) {
                if (G < pg_min_old)
                    return false;
                if (G > 0.0)
                    PG = G;
            } else {
                PG = G;
            }
            pg_max = py_max(pg_max, PG);
            pg_min = py_min(pg_min, PG);
            if (std::fabs(PG) > STEP_MIN) {
                const double updated = py_min(py_max(a - quotient(G, record[i * 2 + 1]), 0.0), ui);
                record[i * 2] = updated;
                x.axpy((updated - a) * yi, w, i);
            }
            return true;
        });
        ++it;
        if (pg_max - pg_min <= stop.tol && std::fabs(pg_max) <= stop.tol && std::fabs(pg_min) <= stop.tol) {
            if (dual.variables.all())
                break;
            dual.variables.activate_all();
            pg_max_old = inf;
            pg_min_old = -inf;
            continue;
        }
        pg_max_old = pg_max > 0.0 ? pg_max : inf;
        pg_min_old = pg_min < 0.0 ? pg_min : -inf;
    }
    for (i64 i = 0; i < n; ++i)
        alpha[i] = record[i * 2];
    return it;
}

template <class L>
i64 regress(const L &rows, const RowTables &t, const double *y, double epsilon, const Stop &stop, double *w,
            double *beta_out) {
    const L x = rows;  // a local copy: the updates of w cannot change its bias or pointers
    const i64 n = i64(t.norms.shape(0));
    const double *upper = t.upper.data(), *diag = t.diag.data();
    Xorshift random(stop.seed);
    Dual dual(t, x.bias, 3);
    double *record = dual.record.data();
    for (i64 i = 0; i < n; ++i)
        record[i * 3 + 2] = y[i];
    if (stop.start)
        dual.start(x, beta_out, nullptr, w);
    RelativeStop relative{stop.tol};
    i64 it = 0;
    while (it < stop.max_iter) {
        const double g_max_old = relative.g_max_old;
        dual.variables.pass(random, [&](i64 i, i64 s, i64 active) LINEAR_INLINE_LAMBDA {
            dual.ask_ahead(x, s, active);
            const std::int32_t g = dual.group[i];
            const double beta = record[i * 3], H = record[i * 3 + 1], ui = upper[g];
            const double G = -record[i * 3 + 2] + diag[g] * beta + x.dot(w, i);
            const double Gp = G + epsilon, Gn = G - epsilon;
            double violation;
            if (beta == 0.0 || std::fabs(beta) < ui) {  // at 0 or free: the rule of the ε term
                if (beta == 0.0 && Gp > g_max_old && Gn < -g_max_old)
                    return false;
                violation = l1_violation(Gp, Gn, beta);
            } else if (beta > 0.0) {  // at U_i
                if (Gp < -g_max_old)
                    return false;
                violation = Gp > 0.0 ? Gp : 0.0;
            } else {  // at −U_i
                if (Gn > g_max_old)
                    return false;
                violation = Gn < 0.0 ? -Gn : 0.0;
            }
            relative.add(violation);
            const double d = l1_step(Gp, Gn, H, beta);
            if (std::fabs(d) < STEP_MIN)
                return true;
            const double updated = py_min(py_max(beta + d, -ui), ui);
            if (updated != beta) {
                record[i * 3] = updated;
                x.axpy(updated - beta, w, i);
            }
            return true;
        });
        if (relative.done(it++, dual.variables))
            break;
    }
    for (i64 i = 0; i < n; ++i)
        beta_out[i] = record[i * 3];
    return it;
}

// The tables match the rows, every group has its constants, the outputs their sizes.
void check(const Rows &rows, const RowTables &t, bool classifying, i64 n_weights, i64 n_variables) {
    const i64 n = rows.n_rows;
    if (i64(t.norms.shape(0)) != n || i64(t.group.shape(0)) != n)
        throw std::invalid_argument("norms and group need one entry per row (" + std::to_string(n) + ")");
    if (n_weights != rows.n_features + 1)
        throw std::invalid_argument("w needs n_features + 1 entries");
    if (n_variables != n)
        throw std::invalid_argument("the dual variables need one entry per row");
    const i64 groups = classifying ? std::min(i64(t.sign.shape(0)), i64(t.upper.shape(0))) : i64(t.upper.shape(0));
    const i64 tables = std::min(groups, i64(t.diag.shape(0)));
    const std::int32_t *group = t.group.data();
    for (i64 i = 0; i < n; ++i)
        if (group[i] < 0 || group[i] >= tables)
            throw std::invalid_argument("group " + std::to_string(group[i]) + " of row " + std::to_string(i) +
                                        " has no constants");
}

i64 dcd_classify(const Rows &rows, const RowTables &tables, const Stop &stop, Vec<double> w, Vec<double> alpha) {
    check(rows, tables, true, i64(w.shape(0)), i64(alpha.shape(0)));
    std::fill(w.data(), w.data() + w.shape(0), 0.0);
    return rows.visit([&](const auto &x) { return classify(x, tables, stop, w.data(), alpha.data()); });
}

i64 dcd_regress(const Rows &rows, const RowTables &tables, Vec<const double> y, double epsilon, const Stop &stop,
                Vec<double> w, Vec<double> beta) {
    check(rows, tables, false, i64(w.shape(0)), i64(beta.shape(0)));
    if (i64(y.shape(0)) != rows.n_rows)
        throw std::invalid_argument("y needs one entry per row");
    std::fill(w.data(), w.data() + w.shape(0), 0.0);
    return rows.visit(
        [&](const auto &x) { return regress(x, tables, y.data(), epsilon, stop, w.data(), beta.data()); });
}

}  // namespace

void register_dcd(nb::module_ m) {
    m.def("dcd_classify", &dcd_classify, nb::arg("rows"), nb::arg("tables"), nb::arg("stop"), nb::arg("w"),
          nb::arg("alpha"), nb::call_guard<nb::gil_scoped_release>(),
          "Solve the classification dual min ½αᵀ(Q + D)α − 1ᵀα, 0 ≤ α_i ≤ U_i, by coordinate descent in a "
          "random order with LIBLINEAR's shrinking; writes w (n_features + 1: the constant feature's last) and "
          "α, returns the passes. Stops when the projected gradient's spread over a full pass is ≤ tol.");
    m.def("dcd_regress", &dcd_regress, nb::arg("rows"), nb::arg("tables"), nb::arg("y"), nb::arg("epsilon"),
          nb::arg("stop"), nb::arg("w"), nb::arg("beta"), nb::call_guard<nb::gil_scoped_release>(),
          "Solve the regression dual min ½βᵀ(Q + D)β − yᵀβ + ε‖β‖₁, −U_i ≤ β_i ≤ U_i, likewise; writes w and "
          "β, returns the passes. Stops when a pass's summed violation is ≤ tol times the first pass's "
          "(LIBLINEAR's rule).");
}

}  // namespace svmkit::linear
