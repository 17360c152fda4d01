// svmkit._core.smo: the SMO solver's block (smo_block.hpp) and the gradient update over the
// rows of the variables that moved.
#include "smo_block.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace svmkit {

namespace {

// Columns of G updated together; one chunk is done without starting threads.
constexpr i64 GRADIENT_CHUNK = 2048;

void check_rows(const RowStore &rows, const i64 *pos, i64 count) {
    for (i64 b = 0; b < count; ++b)
        if (pos[b] < 0 || pos[b] >= rows.n_rows)
            throw std::invalid_argument("pos holds a row outside the kernel store");
}

void check_columns(const RowStore &rows, const i64 *kidx, i64 count) {
    for (i64 j = 0; j < count; ++j)
        if (kidx[j] < 0 || kidx[j] >= rows.n_cols)
            throw std::invalid_argument("kidx holds a column outside the kernel store");
}

// G_j += y_j Σ_b coef_b K(b, kidx_j) for every variable j, coef_b = y_b Δα_b.
void update_gradient(Vec<double> G, Mat<const float> store, Vec<const i64> pos, Vec<const double> coef,
                     Vec<const i64> kidx, Vec<const double> y) {
    const i64 n = i64(G.shape(0)), nb = i64(pos.shape(0));
    if (i64(kidx.shape(0)) != n || i64(y.shape(0)) != n)
        throw std::invalid_argument("G, kidx and y must have one entry per variable");
    if (i64(coef.shape(0)) != nb)
        throw std::invalid_argument("pos and coef must have one entry per moved row");
    const RowStore rows{store.data(), i64(store.shape(0)), i64(store.shape(1))};
    check_rows(rows, pos.data(), nb);
    check_columns(rows, kidx.data(), n);
    const MovedRows moved{rows, pos.data(), coef.data(), nb};
    add_moved_rows(moved, GradientColumns{G.data(), kidx.data(), y.data()}, n, true);
}

// values[slots[r], c] = store[pos[r], cols[c]] for every c from filled[slots[r]] to the end of
// cols, each row from its own kernel row; filled[slots[r]] then marks the row complete.
void fill_block_rows(Mat<float> values, Vec<i64> filled, Vec<const i64> slots, Mat<const float> store,
                     Vec<const i64> pos, Vec<const i64> cols) {
    const i64 k = i64(slots.shape(0)), m = i64(cols.shape(0)), ld = i64(values.shape(1));
    if (i64(pos.shape(0)) != k)
        throw std::invalid_argument("slots and pos must have one entry per row");
    if (m > ld || i64(filled.shape(0)) < i64(values.shape(0)))
        throw std::invalid_argument("values must have a column per entry of cols and filled a count per row");
    for (i64 r = 0; r < k; ++r)
        if (slots.data()[r] < 0 || slots.data()[r] >= i64(values.shape(0)) || filled.data()[slots.data()[r]] < 0)
            throw std::invalid_argument("slots holds a row outside values");
    const RowStore rows{store.data(), i64(store.shape(0)), i64(store.shape(1))};
    check_rows(rows, pos.data(), k);
    check_columns(rows, cols.data(), m);
    float *out = values.data();
    const i64 *cs = cols.data();
    i64 *done = filled.data();
#pragma omp parallel for num_threads(threads()) schedule(dynamic, 16) if (k > 64)
    for (i64 r = 0; r < k; ++r) {
        const i64 s = slots.data()[r];
        const float *src = rows.store + pos.data()[r] * rows.n_cols;
        float *dst = out + s * ld;
        for (i64 c = done[s]; c < m; ++c)
            dst[c] = src[cs[c]];
        done[s] = std::max(done[s], m);
    }
}

template <class T> nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, std::initializer_list<std::size_t> shape) {
    auto *held = new std::vector<T>(std::move(values));
    nb::capsule owner(held, [](void *p) noexcept { delete static_cast<std::vector<T> *>(p); });
    return nb::ndarray<nb::numpy, T>(held->data(), shape, owner);
}

nb::ndarray<nb::numpy, double> to_numpy(const Matrix &A) {
    const std::size_t r = std::size_t(A.rows), c = std::size_t(A.cols);
    return to_numpy(std::vector<double>(A.data(), A.data() + r * c), {r, c});
}

// 0/1 bytes as a NumPy array of bools.
nb::ndarray<nb::numpy, bool> flags_to_numpy(std::vector<std::uint8_t> flags) {
    auto *held = new std::vector<std::uint8_t>(std::move(flags));
    nb::capsule owner(held, [](void *p) noexcept { delete static_cast<std::vector<std::uint8_t> *>(p); });
    return nb::ndarray<nb::numpy, bool>(reinterpret_cast<bool *>(held->data()), {held->size()}, owner);
}

Matrix from_numpy(Mat<const double> A) {
    Matrix out(i64(A.shape(0)), i64(A.shape(1)));
    std::copy(A.data(), A.data() + out.rows * out.cols, out.data());
    return out;
}

}  // namespace

// acc[t] += Σ_b coef_b K(b, col(t)) over the moved rows b: a chunk of columns stays in cache
// while every moved row streams past it, four rows at a time, each column's sum taken in the
// rows' order.
template <class Column> inline void accumulate(const MovedRows &moved, Column col, i64 w, double *acc) {
    const float *store = moved.rows.store;
    const i64 ld = moved.rows.n_cols;
    i64 b = 0;
    for (; b + 4 <= moved.count; b += 4) {
        const float *r0 = store + moved.pos[b] * ld, *r1 = store + moved.pos[b + 1] * ld;
        const float *r2 = store + moved.pos[b + 2] * ld, *r3 = store + moved.pos[b + 3] * ld;
        const double c0 = moved.coef[b], c1 = moved.coef[b + 1], c2 = moved.coef[b + 2], c3 = moved.coef[b + 3];
        for (i64 t = 0; t < w; ++t) {
            const i64 k = col(t);
            double s = acc[t];
            s += c0 * double(r0[k]);
            s += c1 * double(r1[k]);
            s += c2 * double(r2[k]);
            s += c3 * double(r3[k]);
            acc[t] = s;
        }
    }
    for (; b < moved.count; ++b) {
        const float *row = store + moved.pos[b] * ld;
        const double cb = moved.coef[b];
        for (i64 t = 0; t < w; ++t)
            acc[t] += cb * double(row[col(t)]);
    }
}

// Largest span of the columns, relative to their number, whose every column is summed by plain
// loads and the variables' sums picked from them: gathers cost more than twice a plain load.
constexpr i64 DENSE_SPAN = 2;

// acc[t] = Σ_b coef_b K(b, c0 + t) for t < w: a run of each moved row, by plain loads.
SVMKIT_CLONES void sum_run(const MovedRows &moved, i64 c0, i64 w, double *acc) {
    accumulate(moved, [c0](i64 t) { return c0 + t; }, w, acc);
}

// acc[t] = Σ_b coef_b K(b, ks[t]) for t < w, gathered.
SVMKIT_CLONES void sum_gathered(const MovedRows &moved, const i64 *ks, i64 w, double *acc) {
    accumulate(moved, [ks](i64 t) { return ks[t]; }, w, acc);
}

void add_moved_rows(const MovedRows &moved, const GradientColumns &cols, i64 n, bool parallel) {
    if (n <= 0)
        return;
    const i64 *ks = cols.kidx;
    const auto [lowest, highest] = std::minmax_element(ks, ks + n);
    const i64 c0 = *lowest, span = *highest - c0 + 1;
    const bool whole = span <= DENSE_SPAN * n;
    // by whole spans: every column of the span once, then picked (columns repeat when variables
    // share a point, as SVR's pairs and equal points do); else each chunk's columns gathered
    const i64 width = whole ? span : n;
    std::vector<double> sums(static_cast<std::size_t>(width), 0.0);
    double *acc = sums.data();
    const i64 chunks = (width + GRADIENT_CHUNK - 1) / GRADIENT_CHUNK;
#pragma omp parallel for num_threads(threads()) schedule(static) if (parallel && chunks > 1)
    for (i64 c = 0; c < chunks; ++c) {
        const i64 lo = c * GRADIENT_CHUNK, w = std::min(width, lo + GRADIENT_CHUNK) - lo;
        if (whole)
            sum_run(moved, c0 + lo, w, acc + lo);
        else
            sum_gathered(moved, ks + lo, w, acc + lo);
    }
    double *G = cols.G;
    const double *y = cols.y;
    if (whole)
        for (i64 t = 0; t < n; ++t)
            G[t] += y[t] * acc[ks[t] - c0];
    else
        for (i64 t = 0; t < n; ++t)
            G[t] += y[t] * acc[t];
}

void register_smo(nb::module_ m) {
    m.attr("PANEL") = PANEL;
    m.attr("DENSE_SPAN") = DENSE_SPAN;

    m.def("fill_block_rows", &fill_block_rows, nb::arg("values"), nb::arg("filled"), nb::arg("slots"), nb::arg("store"),
          nb::arg("pos"), nb::arg("cols"), nb::call_guard<nb::gil_scoped_release>(),
          "values[slots[r], c] = store[pos[r], cols[c]] (float32) for every c from filled[slots[r]] to the end of "
          "cols, each row from its own kernel row; filled[slots[r]] is then the length of cols.");

    m.def("update_gradient", &update_gradient, nb::arg("G"), nb::arg("store"), nb::arg("pos"), nb::arg("coef"),
          nb::arg("kidx"), nb::arg("y"), nb::call_guard<nb::gil_scoped_release>(),
          "G_j += y_j Σ_b coef_b K(b, kidx_j) for every variable j (coef_b = y_b Δα_b), reading the kernel "
          "row of moved variable b from row pos[b] of the float32 store. Each column of the store within the "
          "columns' span is summed once by plain loads when the span is at most twice their number (variables "
          "sharing a point share its sum), else each variable's column is gathered; in chunks of 2,048 columns, "
          "on threads when there are several chunks.");

    bind_struct<SmoSettings>(m, "Settings",
                             "What a block solve is asked: stop below the violation eps, after max_iter pair "
                             "updates, or when an α passes limit (an unbounded dual); in ν mode the pairs stay "
                             "within a y-class; shrinking: LIBSVM's.",
                             field("eps", &SmoSettings::eps), field("max_iter", &SmoSettings::max_iter),
                             field("nu_mode", &SmoSettings::nu_mode), field("shrinking", &SmoSettings::shrinking),
                             field("limit", &SmoSettings::limit));

    nb::class_<SmoBlock>(m, "BlockSolver",
                         "LIBSVM's SMO on one block B of a dual's variables, its state (α, G, the bounds, "
                         "the active set, the gathered rows of Q_BB and the Newton steps' Cholesky factor) "
                         "kept in slots as LIBSVM's Solver keeps it. Kernel rows of B are rows pos of the "
                         "float32 store, its variables' data rows (store columns) kidx; Q_ij = y_i y_j "
                         "K(x_kidx[i], x_kidx[j]), QD its diagonal, U the upper bounds. The rows of Q_BB "
                         "are gathered into scratch (float32, at least q × q) as the pairs need them.")
        .def(nb::init<Mat<const float>, Vec<const i64>, Vec<const i64>, Vec<const double>, Vec<const double>,
                      Vec<const double>, Mat<float>>(),
             nb::arg("store"), nb::arg("pos"), nb::arg("kidx"), nb::arg("y"), nb::arg("U"), nb::arg("QD"),
             nb::arg("scratch"))
        .def("solve",
             static_cast<i64 (SmoBlock::*)(Vec<double>, Vec<double>, const SmoSettings &, Vec<const std::uint8_t>)>(
                 &SmoBlock::solve),
             nb::arg("alpha"), nb::arg("G"), nb::arg("settings"), nb::arg("stop"),
             nb::call_guard<nb::gil_scoped_release>(),
             "SMO with second-order selection (Fan, Chen & Lin 2005), LIBSVM's shrinking, and Newton steps "
             "on the free variables when the pair updates have cost as much as one, from alpha and G (the "
             "block's gradient, exact on entry), both updated in place. Stops when the block's maximal "
             "violation is below settings.eps, after settings.max_iter pair updates, when an α passes "
             "settings.limit, or when stop[0] is set (read every few hundred updates: an interrupted fit). "
             "Returns the pair updates.")
        .def("newton_factor",
             [](SmoBlock &b, Vec<const i64> free) {
                 return b.newton_factor(std::vector<i64>(free.data(), free.data() + free.shape(0)));
             },
             nb::arg("free"), nb::call_guard<nb::gil_scoped_release>(),
             "The Newton steps' factor on the given free slots (every slot active), extended from the "
             "one of the call before or built anew; returns whether it was built anew.")
        .def_prop_ro("factor",
                     [](const SmoBlock &b) {
                         const Factor &f = b.factor();
                         const std::size_t k = std::size_t(f.R.rows);
                         return nb::make_tuple(to_numpy(f.R), to_numpy(f.H),
                                               to_numpy(std::vector<i64>(f.base.begin(), f.base.begin() + k), {k}));
                     },
                     "(R, H, base): the Newton factor R (upper, RᵀR = H) over the block's variables base.")
        .def_prop_ro("credit", &SmoBlock::credit,
                     "Pair-update work not yet spent on Newton steps, in flops.");

    m.def("independent_cholesky",
          [](Mat<const double> H, double floor) {
              if (H.shape(0) != H.shape(1))
                  throw std::invalid_argument("H must be square");
              std::vector<std::uint8_t> kept;
              Matrix R = independent_cholesky(from_numpy(H), floor, kept);
              return nb::make_tuple(to_numpy(R), flags_to_numpy(std::move(kept)));
          },
          nb::arg("H"), nb::arg("floor"),
          "(R, kept): upper triangular R with H = RᵀR on the rows it keeps; row i is dropped (its row and "
          "column of R left zero) when its pivot, what H_ii adds beyond the rows kept before it, is at most "
          "floor. Blocked in panels of PANEL columns, the trailing matrix updated by BLAS products.");
    m.def("cholesky_solve",
          [](Mat<const double> R, Mat<const double> B) {
              if (R.shape(0) != R.shape(1) || R.shape(0) != B.shape(0))
                  throw std::invalid_argument("R must be square with as many rows as B");
              return to_numpy(cholesky_solve(from_numpy(R), from_numpy(B)));
          },
          nb::arg("R"), nb::arg("B"),
          "X with RᵀR X = B for the upper triangular R (a nonzero diagonal): forward, then back "
          "substitution by panels of PANEL rows, each panel's product with the rows solved before by BLAS.");

    register_smo_batch(m);
}

}  // namespace svmkit
