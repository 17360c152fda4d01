// Many small duals at once (the class pairs of a one-vs-one fit, their calibration folds):
// each LIBSVM's SMO on one block (smo_block.hpp) of its own, on threads over the problems, and
// Platt's sigmoid fitted to each problem's decision values (LIBSVM's sigmoid_train).
#include "smo_block.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace svmkit {

namespace {

// Problems per thread hand-out: a pair of a few rows solves in microseconds.
constexpr i64 PROBLEMS_PER_TASK = 8;

// Checks that offsets run from 0 to `size` without falling back; returns the problem count.
i64 check_offsets(Vec<const i64> offsets, i64 size, const char *what) {
    const i64 k = i64(offsets.shape(0)) - 1;
    if (k < 0 || offsets(0) != 0 || offsets(k) != size)
        throw std::invalid_argument(std::string("offsets must run from 0 to the number of ") + what);
    for (i64 p = 0; p < k; ++p)
        if (offsets(p + 1) < offsets(p))
            throw std::invalid_argument("offsets must not decrease");
    return k;
}

template <class T> nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, std::initializer_list<std::size_t> shape) {
    auto *held = new std::vector<T>(std::move(values));
    nb::capsule owner(held, [](void *p) noexcept { delete static_cast<std::vector<T> *>(p); });
    return nb::ndarray<nb::numpy, T>(held->data(), shape, owner);
}

// Problem k of a batch: its variables' kernel rows (row pos of the store), data rows (kidx),
// y, U and QD, for `SmoBlock`.
BlockVariables problem_block(const RowStore &rows, Mat<const i64> index, Mat<const double> values, i64 lo, i64 hi) {
    const i64 n = i64(index.shape(1));
    BlockVariables b;
    b.rows = rows;
    b.q = hi - lo;
    b.pos = index.data() + lo;
    b.kidx = index.data() + n + lo;
    b.y = values.data() + lo;
    b.U = values.data() + n + lo;
    b.QD = values.data() + 2 * n + lo;
    return b;
}

// G_j += y_j Σ_b y_b α_b K(b, kidx_j) over the variables b with α_b > 0: the gradient of a
// problem that starts away from 0 (ν), as the solver's `initial_gradients` computes it.
void add_start(const BlockVariables &b, const double *alpha, double *G) {
    std::vector<i64> pos;
    std::vector<double> coef;
    for (i64 s = 0; s < b.q; ++s)
        if (alpha[s] > 0) {
            pos.push_back(b.pos[s]);
            coef.push_back(b.y[s] * alpha[s]);
        }
    if (pos.empty())
        return;
    const MovedRows moved{b.rows, pos.data(), coef.data(), i64(pos.size())};
    add_moved_rows(moved, GradientColumns{G, b.kidx, b.y}, b.q, false);
}

// Each problem k (variables offsets[k] .. offsets[k+1] − 1) solved by LIBSVM's SMO from its α
// and G, both updated in place; returns each problem's pair updates.
nb::ndarray<nb::numpy, i64> solve_batch(Mat<const float> store, Vec<const i64> offsets, Mat<const i64> index,
                                        Mat<const double> values, Vec<double> alpha, Vec<double> G,
                                        const SmoSettings &settings, Vec<const std::uint8_t> stop) {
    const i64 n = i64(alpha.shape(0));
    if (index.shape(0) != 2 || values.shape(0) != 3 || i64(index.shape(1)) != n || i64(values.shape(1)) != n ||
        i64(G.shape(0)) != n)
        throw std::invalid_argument("index (pos; kidx), values (y; U; QD), alpha and G must have one column or "
                                    "entry per variable");
    if (stop.shape(0) < 1)
        throw std::invalid_argument("stop must hold one flag");
    const i64 k = check_offsets(offsets, n, "variables");
    const RowStore rows{store.data(), i64(store.shape(0)), i64(store.shape(1))};
    check_block(problem_block(rows, index, values, 0, n));
    std::vector<i64> n_iter(std::size_t(k), 0);
    const std::uint8_t *flag = stop.data();
    {
        nb::gil_scoped_release release;  // the result below is a Python object: made with the GIL
#pragma omp parallel num_threads(threads())
        {
            std::vector<float> scratch;
            SmoBlock block;
#pragma omp for schedule(dynamic, PROBLEMS_PER_TASK)
            for (i64 p = 0; p < k; ++p) {
                if (stopped(flag))
                    continue;
                BlockVariables b = problem_block(rows, index, values, offsets(p), offsets(p + 1));
                scratch.resize(std::size_t(b.q * b.q));
                b.scratch = scratch.data();
                b.ldq = b.q;
                double *a = alpha.data() + offsets(p), *g = G.data() + offsets(p);
                add_start(b, a, g);
                block.load(b);
                n_iter[std::size_t(p)] = block.solve(a, g, settings, flag);
            }
        }
    }
    return to_numpy(std::move(n_iter), {std::size_t(k)});
}

// out_i = Σ_j coef_j K(train_j, test_i) for the test variables i of each problem, over its
// training variables j of nonzero coef (kernel row pos_j of the store, column kidx_i).
nb::ndarray<nb::numpy, double> batch_decisions(Mat<const float> store, Vec<const i64> train_offsets,
                                               Vec<const i64> train_pos, Vec<const double> coef,
                                               Vec<const i64> test_offsets, Vec<const i64> test_kidx) {
    const i64 n_train = i64(train_pos.shape(0)), n_test = i64(test_kidx.shape(0));
    if (i64(coef.shape(0)) != n_train)
        throw std::invalid_argument("train_pos and coef must have one entry per training variable");
    const i64 k = check_offsets(train_offsets, n_train, "training variables");
    if (check_offsets(test_offsets, n_test, "test variables") != k)
        throw std::invalid_argument("train_offsets and test_offsets must give the same problems");
    const i64 n_rows = i64(store.shape(0)), ld = i64(store.shape(1));
    for (i64 j = 0; j < n_train; ++j)
        if (train_pos(j) < 0 || train_pos(j) >= n_rows)
            throw std::invalid_argument("train_pos holds a row outside the kernel store");
    for (i64 i = 0; i < n_test; ++i)
        if (test_kidx(i) < 0 || test_kidx(i) >= ld)
            throw std::invalid_argument("test_kidx holds a column outside the kernel store");
    std::vector<double> out(std::size_t(n_test), 0.0);
    const float *K = store.data();
    {
        nb::gil_scoped_release release;
#pragma omp parallel for num_threads(threads()) schedule(dynamic, PROBLEMS_PER_TASK)
        for (i64 p = 0; p < k; ++p)
            for (i64 i = test_offsets(p); i < test_offsets(p + 1); ++i) {
                double s = 0.0;
                for (i64 j = train_offsets(p); j < train_offsets(p + 1); ++j)
                    if (coef(j) != 0)
                        s += coef(j) * double(K[train_pos(j) * ld + test_kidx(i)]);
                out[std::size_t(i)] = s;
            }
    }
    return to_numpy(std::move(out), {std::size_t(n_test)});
}

// What Platt's Newton method is asked: at most max_iter steps, a backtracking step no
// shorter than min_step, stop when both gradient components are below eps.
struct SigmoidSettings {
    i64 max_iter = 100;
    double min_step = 1e-10, eps = 1e-5;
};

// Σ cross-entropy of the targets t against 1 / (1 + exp(A·f + B)), without overflow.
double sigmoid_loss(const double *f, const double *t, i64 n, double A, double B) {
    double s = 0.0;
    for (i64 i = 0; i < n; ++i) {
        const double z = f[i] * A + B;
        s += (z >= 0 ? t[i] * z : (t[i] - 1) * z) + std::log1p(std::exp(-std::fabs(z)));
    }
    return s;
}

// (A, B) of Platt's sigmoid on decision values f with labels (> 0 positive): Newton steps on
// H + 1e-12·I with an Armijo backtracking search on the smoothed targets of Lin, Lin & Weng
// (2007) (LIBSVM's sigmoid_train).
std::pair<double, double> sigmoid_train(const double *f, const double *labels, i64 n, const SigmoidSettings &s) {
    i64 n_pos = 0;
    for (i64 i = 0; i < n; ++i)
        n_pos += labels[i] > 0;
    const double hi = (double(n_pos) + 1.0) / (double(n_pos) + 2.0), lo = 1.0 / (double(n - n_pos) + 2.0);
    std::vector<double> t(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i)
        t[std::size_t(i)] = labels[i] > 0 ? hi : lo;
    double A = 0.0, B = std::log((double(n - n_pos) + 1.0) / (double(n_pos) + 1.0));
    double fval = sigmoid_loss(f, t.data(), n, A, B);
    for (i64 it = 0; it < s.max_iter; ++it) {
        double h11 = 0.0, h22 = 0.0, h21 = 0.0, g1 = 0.0, g2 = 0.0;
        for (i64 i = 0; i < n; ++i) {
            const double z = f[i] * A + B, e = std::exp(-std::fabs(z));
            const double pi = z >= 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
            const double d2 = pi * (1.0 - pi), d1 = t[std::size_t(i)] - pi;
            h11 += f[i] * f[i] * d2;
            h22 += d2;
            h21 += f[i] * d2;
            g1 += f[i] * d1;
            g2 += d1;
        }
        h11 += 1e-12;
        h22 += 1e-12;
        if (std::fabs(g1) < s.eps && std::fabs(g2) < s.eps)
            break;
        const double det = h11 * h22 - h21 * h21;
        const double dA = -(h22 * g1 - h21 * g2) / det, dB = -(-h21 * g1 + h11 * g2) / det;
        const double gd = g1 * dA + g2 * dB;
        double step = 1.0;
        while (step >= s.min_step) {
            const double newf = sigmoid_loss(f, t.data(), n, A + step * dA, B + step * dB);
            if (newf < fval + 1e-4 * step * gd) {
                A += step * dA;
                B += step * dB;
                fval = newf;
                break;
            }
            step /= 2.0;
        }
        if (step < s.min_step)
            break;
    }
    return {A, B};
}

// (A, B) per problem k, fitted to dec[offsets[k] .. offsets[k+1] − 1] and their labels.
nb::ndarray<nb::numpy, double> fit_sigmoids(Vec<const double> dec, Vec<const double> labels,
                                            Vec<const i64> offsets, const SigmoidSettings &s) {
    const i64 n = i64(dec.shape(0));
    if (i64(labels.shape(0)) != n)
        throw std::invalid_argument("dec and labels must have one entry per decision value");
    const i64 k = check_offsets(offsets, n, "decision values");
    std::vector<double> out(std::size_t(2 * k));
    {
        nb::gil_scoped_release release;
#pragma omp parallel for num_threads(threads()) schedule(dynamic, PROBLEMS_PER_TASK)
        for (i64 p = 0; p < k; ++p) {
            const auto [A, B] = sigmoid_train(dec.data() + offsets(p), labels.data() + offsets(p),
                                              offsets(p + 1) - offsets(p), s);
            out[std::size_t(2 * p)] = A;
            out[std::size_t(2 * p + 1)] = B;
        }
    }
    return to_numpy(std::move(out), {std::size_t(k), 2});
}

}  // namespace

void register_smo_batch(nb::module_ m) {
    m.def("solve_batch", &solve_batch, nb::arg("store"), nb::arg("offsets"), nb::arg("index"), nb::arg("values"),
          nb::arg("alpha"), nb::arg("G"), nb::arg("settings"), nb::arg("stop"),
          "Solve many duals, problem k being the variables offsets[k] .. offsets[k+1] − 1: index holds each "
          "variable's kernel row (row 0: its row of the float32 store) and data row (row 1), values its y, U "
          "and Q's diagonal (rows 0-2). Each is LIBSVM's SMO on one block (BlockSolver) from its alpha and G, "
          "G first given the kernel terms of its α > 0 (G = p on entry); alpha and G are updated in place. "
          "On threads over the problems, without the GIL; returns each problem's pair updates.");
    m.def("batch_decisions", &batch_decisions, nb::arg("store"), nb::arg("train_offsets"), nb::arg("train_pos"),
          nb::arg("coef"), nb::arg("test_offsets"), nb::arg("test_kidx"),
          "Σ_j coef_j K(train_j, test_i) for the test variables i of each problem (test_offsets) over its "
          "training variables j (train_offsets) of nonzero coef: kernel row train_pos[j] of the float32 store "
          "at column test_kidx[i], summed in float64.");
    bind_struct<SigmoidSettings>(m, "SigmoidSettings",
                                 "Platt's Newton method: at most max_iter steps, backtracking steps no shorter "
                                 "than min_step, stopped when both gradient components are below eps.",
                                 field("max_iter", &SigmoidSettings::max_iter),
                                 field("min_step", &SigmoidSettings::min_step), field("eps", &SigmoidSettings::eps));
    m.def("fit_sigmoids", &fit_sigmoids, nb::arg("dec"), nb::arg("labels"), nb::arg("offsets"), nb::arg("settings"),
          "(A, B) per problem k of Platt's sigmoid 1 / (1 + exp(A·f + B)) on the decision values "
          "dec[offsets[k] .. offsets[k+1] − 1] with their labels (> 0 positive): Newton steps on H + 1e-12·I "
          "with an Armijo backtracking search, on Lin, Lin & Weng's (2007) smoothed targets (LIBSVM's "
          "sigmoid_train); on threads over the problems.");
}

}  // namespace svmkit
