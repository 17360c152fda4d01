// Exact Shapley values of an RBF expansion f(x) = Σ_s A[s, o] Π_j exp(−γ (x_j − z_sj)²), one
// output o per column of A. For one centre z and one background row β, the coalition S's value
// Π_{j∈S} a_j Π_{j∉S} c_j (a_j = k(x_j, z_j), c_j = k(β_j, z_j); c = 1 for the functional
// value) gives feature j the Shapley value (a_j − c_j) Σ_S w(|S|) Π_{l∈S} a_l Π_{l∉S∪j} c_l, and
// since w(s) = s!(d−1−s)!/d! = ∫₀¹ q^s (1 − q)^(d−1−s) dq, that sum is ∫₀¹ Π_{l≠j} (c_l + q(a_l − c_l)) dq:
// a polynomial of degree d − 1 in q, which Gauss–Legendre quadrature on ⌈d/2⌉ nodes integrates
// exactly. The products without j come from prefix and suffix products (no division, which
// would fail where a factor underflows): O(d²) per (row, centre, background row).
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace svmkit {

namespace {

// Values of the background factors held at once (8 MB): the centres run in blocks of this many
// values' worth.
constexpr i64 FACTOR_BLOCK = i64(1) << 20;

// T[j·M + m] += coef (a_j − c_j) Π_{l<j} h_l(q_m) Π_{l>j} h_l(q_m), h_l(q) = c_l + q (a_l − c_l), at
// each of the M nodes q: the quadrature's weighted sum over the nodes is left to the caller, so
// that every loop here runs across the nodes with no reduction. P, H: scratch of (d + 1)·M and
// d·M values; S of M.
SVMKIT_CLONES void add_term(const double *a, const double *c, const double *q, i64 d, i64 M, double coef,
                            double *P, double *H, double *S, double *T) {
    for (i64 m = 0; m < M; ++m)
        P[m] = 1.0;
    for (i64 l = 0; l < d; ++l) {
        const double diff = a[l] - c[l], cl = c[l];
        const double *p = P + l * M;
        double *h = H + l * M, *next = P + (l + 1) * M;
        for (i64 m = 0; m < M; ++m) {
            h[m] = cl + q[m] * diff;
            next[m] = p[m] * h[m];
        }
    }
    for (i64 m = 0; m < M; ++m)
        S[m] = 1.0;
    for (i64 j = d - 1; j >= 0; --j) {
        const double scaled = coef * (a[j] - c[j]);
        const double *p = P + j * M, *h = H + j * M;
        double *t = T + j * M;
        for (i64 m = 0; m < M; ++m) {
            t[m] += scaled * p[m] * S[m];
            S[m] *= h[m];
        }
    }
}

// o[j·k + c] += Σ_m ω_m T[j·M + m] · alpha[c] for the k outputs, T then zeroed.
void add_nodes(double *T, const double *w, i64 d, i64 M, const double *alpha, i64 k, double *o) {
    for (i64 j = 0; j < d; ++j) {
        double g = 0.0;
        for (i64 m = 0; m < M; ++m)
            g += w[m] * T[j * M + m];
        for (i64 c = 0; c < k; ++c)
            o[j * k + c] += g * alpha[c];
    }
    std::fill(T, T + d * M, 0.0);
}

struct Problem {
    const double *X, *Z, *A, *B, *q, *w;
    i64 n, d, n_sv, k, n_bg, M;
    double gamma;
    const std::uint8_t *stop;  // a Ctrl-C's flag: the rows not begun are skipped
};

// out[r, j·k + o] for the rows of X, the centres s0 … s1 − 1 added in; C holds their background
// factors, (s − s0) × n_bg × d. With one output each centre's weight goes into the terms and the
// nodes are summed once per row; with more, once per centre.
void add_block(const Problem &p, i64 s0, i64 s1, const double *C, double *out) {
    const i64 d = p.d, k = p.k, M = p.M, bg = std::max<i64>(p.n_bg, 1);
    const double scale = 1.0 / double(bg), one = 1.0;
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> a(d), P((d + 1) * M), H(d * M), S(M), T(d * M, 0.0);
#pragma omp for schedule(dynamic)
        for (i64 r = 0; r < p.n; ++r) {
            if (stopped(p.stop))
                continue;
            const double *x = p.X + r * d;
            double *o = out + r * d * k;
            for (i64 s = s0; s < s1; ++s) {
                const double *z = p.Z + s * d;
                for (i64 j = 0; j < d; ++j) {
                    const double t = x[j] - z[j];
                    a[j] = std::exp(-p.gamma * t * t);
                }
                const double coef = k == 1 ? scale * p.A[s] : scale;
                for (i64 b = 0; b < bg; ++b)
                    add_term(a.data(), C + ((s - s0) * bg + b) * d, p.q, d, M, coef, P.data(), H.data(), S.data(),
                             T.data());
                if (k > 1)
                    add_nodes(T.data(), p.w, d, M, p.A + s * k, k, o);
            }
            if (k == 1)
                add_nodes(T.data(), p.w, d, M, &one, 1, o);
        }
    }
}

void rbf_values(Mat<const double> X, Mat<const double> Z, Mat<const double> A, Mat<const double> B,
                Mat<const double> quad, double gamma, Vec<const std::uint8_t> stop, Mat<double> out) {
    if (stop.shape(0) < 1)
        throw std::invalid_argument("stop must hold one flag");
    const Problem p{X.data(), Z.data(), A.data(), B.data(), quad.data(), quad.data() + quad.shape(1),
                    i64(X.shape(0)), i64(X.shape(1)), i64(Z.shape(0)), i64(A.shape(1)), i64(B.shape(0)),
                    i64(quad.shape(1)), gamma, stop.data()};
    if (i64(Z.shape(1)) != p.d || (p.n_bg > 0 && i64(B.shape(1)) != p.d))
        throw std::invalid_argument("X, Z and B must have the same columns");
    if (i64(A.shape(0)) != p.n_sv)
        throw std::invalid_argument("A must have one row per centre (row of Z)");
    if (quad.shape(0) != 2 || 2 * p.M < p.d)
        throw std::invalid_argument("quad must hold ⌈d/2⌉ or more Gauss–Legendre nodes and weights on [0, 1]");
    if (i64(out.shape(0)) != p.n || i64(out.shape(1)) != p.d * p.k)
        throw std::invalid_argument("out must be X's rows × (columns · outputs)");
    double *o = out.data();
    std::fill(o, o + p.n * p.d * p.k, 0.0);
    const i64 bg = std::max<i64>(p.n_bg, 1), per_centre = bg * std::max<i64>(p.d, 1);
    const i64 block = std::max<i64>(1, FACTOR_BLOCK / per_centre);
    std::vector<double> C(std::min(block, std::max<i64>(p.n_sv, 1)) * per_centre, 1.0);
    for (i64 s0 = 0; s0 < p.n_sv && !stopped(p.stop); s0 += block) {
        const i64 s1 = std::min(s0 + block, p.n_sv);
        if (p.n_bg > 0) {
#pragma omp parallel for num_threads(threads())
            for (i64 s = s0; s < s1; ++s)
                for (i64 b = 0; b < bg; ++b)
                    for (i64 j = 0; j < p.d; ++j) {
                        const double t = p.B[b * p.d + j] - p.Z[s * p.d + j];
                        C[((s - s0) * bg + b) * p.d + j] = std::exp(-gamma * t * t);
                    }
        }
        add_block(p, s0, s1, C.data(), o);
    }
}

}  // namespace

void register_shapley(nb::module_ m) {
    auto array = [](const char *name) { return nb::arg(name).noconvert(); };
    m.def("rbf_values", &rbf_values, array("X"), array("Z"), array("A"), array("B"), array("quad"), nb::arg("gamma"),
          array("stop"), array("out"), nb::call_guard<nb::gil_scoped_release>(),
          "rbf_values(X, Z, A, B, quad, gamma, stop, out): out[r, j·k + o] = feature j's exact Shapley value in row r of "
          "Σ_s A[s, o] exp(−γ ||x − z_s||²), the interventional value over the background rows B (the mean over "
          "them), or the functional value when B has no rows; quad: Gauss–Legendre nodes (row 0) and weights "
          "(row 1) on [0, 1], ⌈d/2⌉ or more; stop: a flag that, once set, leaves the rows not begun.");
}

}  // namespace svmkit
