// Triangular solves with a Cholesky factor in LAPACK's lower RFP format (TRANSR='N'), in
// parallel, for the preconditioner of each conjugate gradient step: LAPACK's spftrs streams the
// factor at a third of the memory bandwidth (N = 10,000: 30 ms a solve, 19.5 ms here). The factor
// L = [[L11, 0], [L21, L22]] sits in an ld-row Fortran array as L11 and L21 in its first k columns
// and L22ᵀ (upper) at its top (see `rfp_layout`).
//
// Each triangle is solved in blocks of BLOCK columns: the block's own triangle serially, its
// product with the rest of the vector in parallel (over rows, or over columns).
#include "dense.hpp"

#include <algorithm>
#include <stdexcept>

namespace svmkit {

namespace {

// Columns per block of a triangular solve.
constexpr i64 BLOCK = 256;
// Rows per parallel chunk of a matrix–vector update.
constexpr i64 CHUNK = 1024;

// A matrix in the flat factor a: M[r, c] = a[off + r + c·ld], columns contiguous.
struct View {
    const float *a;
    i64 off, ld;
    const float *col(i64 c) const { return a + off + c * ld; }
};

// ys[t] −= Σ_c M[lo + t, c]·v[c] for t < len, c in [c0, c1): one chunk of `sub_rows`, whose part of
// y stays in the first-level cache.
SVMKIT_CLONES void chunk_sub_rows(View M, i64 lo, i64 len, i64 c0, i64 c1, const float *v, float *__restrict ys) {
    for (i64 c = c0; c < c1; ++c) {
        const float vc = v[c];
        const float *__restrict col = M.col(c) + lo;
        for (i64 t = 0; t < len; ++t)
            ys[t] -= col[t] * vc;
    }
}

// Σ_t a[t]·b[t], summed in any order (the vector lanes').
SVMKIT_CLONES float dot32(const float *a, const float *b, i64 len) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (i64 t = 0; t < len; ++t)
        s += a[t] * b[t];
    return s;
}

// y[t] −= a[t]·x for t < len.
SVMKIT_CLONES void sub_scaled(float *__restrict y, const float *__restrict a, float x, i64 len) {
    for (i64 t = 0; t < len; ++t)
        y[t] -= a[t] * x;
}

// y[r] −= Σ_c M[r, c]·v[c] for r in [r0, r1), c in [c0, c1); in parallel over chunks of CHUNK rows.
// v and y may be one vector: the rows written are never columns read.
void sub_rows(View M, i64 r0, i64 r1, i64 c0, i64 c1, const float *v, float *y) {
    const i64 chunks = r1 > r0 ? (r1 - r0 + CHUNK - 1) / CHUNK : 0;
#pragma omp parallel for num_threads(threads()) schedule(static) if (chunks > 1)
    for (i64 ch = 0; ch < chunks; ++ch) {
        const i64 lo = r0 + ch * CHUNK, hi = std::min(r1, lo + CHUNK);
        chunk_sub_rows(M, lo, hi - lo, c0, c1, v, y + lo);
    }
}

// y[c] −= Σ_r M[r, c]·v[r] for c in [c0, c1), r in [r0, r1); in parallel over columns.
void sub_dots(View M, i64 r0, i64 r1, i64 c0, i64 c1, const float *v, float *y) {
#pragma omp parallel for num_threads(threads()) schedule(static) if (c1 - c0 > 1)
    for (i64 c = c0; c < c1; ++c)
        y[c] -= dot32(M.col(c) + r0, v + r0, r1 - r0);
}

// x ← L⁻¹x for the lower m × m triangle L.
void lower_solve(View L, i64 m, float *x) {
    for (i64 j0 = 0; j0 < m; j0 += BLOCK) {
        const i64 j1 = std::min(m, j0 + BLOCK);
        for (i64 j = j0; j < j1; ++j) {
            const float *col = L.col(j) + j;
            const float xj = x[j] / col[0];
            x[j] = xj;
            sub_scaled(x + j + 1, col + 1, xj, j1 - j - 1);
        }
        sub_rows(L, j1, m, j0, j1, x, x);
    }
}

// x ← L⁻ᵀx for the lower m × m triangle L.
void lower_transpose_solve(View L, i64 m, float *x) {
    for (i64 j1 = m; j1 > 0;) {
        const i64 j0 = std::max<i64>(0, j1 - BLOCK);
        sub_dots(L, j1, m, j0, j1, x, x);
        for (i64 j = j1 - 1; j >= j0; --j) {
            const float *col = L.col(j) + j;
            float s = x[j];
            for (i64 t = 1; t < j1 - j; ++t)
                s -= col[t] * x[j + t];
            x[j] = s / col[0];
        }
        j1 = j0;
    }
}

// x ← U⁻ᵀx for the upper m × m triangle U.
void upper_transpose_solve(View U, i64 m, float *x) {
    for (i64 j0 = 0; j0 < m; j0 += BLOCK) {
        const i64 j1 = std::min(m, j0 + BLOCK);
        sub_dots(U, 0, j0, j0, j1, x, x);
        for (i64 j = j0; j < j1; ++j) {
            const float *col = U.col(j) + j0;
            float s = x[j];
            for (i64 t = 0; t < j - j0; ++t)
                s -= col[t] * x[j0 + t];
            x[j] = s / col[j - j0];
        }
    }
}

// x ← U⁻¹x for the upper m × m triangle U.
void upper_solve(View U, i64 m, float *x) {
    for (i64 j1 = m; j1 > 0;) {
        const i64 j0 = std::max<i64>(0, j1 - BLOCK);
        for (i64 j = j1 - 1; j >= j0; --j) {
            const float *col = U.col(j) + j0;
            const float xj = x[j] / col[j - j0];
            x[j] = xj;
            sub_scaled(x + j0, col, xj, j - j0);
        }
        sub_rows(U, 0, j0, j0, j1, x, x);
        j1 = j0;
    }
}

// X ← (LLᵀ)⁻¹X for L the lower RFP factor `a` of order n (spftrf's) and each row of X (m × n):
// L z = x by L11, L21 and L22 = Uᵀ, then Lᵀ x = z in reverse.
void rfp_cholesky_solve(Vec<const float> a, i64 n, Mat<float> X) {
    if (n < 0 || i64(a.shape(0)) != triangle_size(n))
        throw std::invalid_argument("the factor does not hold a triangle of order n");
    if (i64(X.shape(1)) != n)
        throw std::invalid_argument("X must have n columns");
    const auto [e, k, ld] = rfp_layout(n);
    const View l11{a.data(), e, ld}, l21{a.data(), k + e, ld}, u{a.data(), e ? 0 : ld, ld};
    const i64 m2 = n - k;
    for (i64 i = 0; i < i64(X.shape(0)); ++i) {
        float *x1 = X.data() + i * n, *x2 = x1 + k;
        lower_solve(l11, k, x1);
        sub_rows(l21, 0, m2, 0, k, x1, x2);
        upper_transpose_solve(u, m2, x2);
        upper_solve(u, m2, x2);
        sub_dots(l21, 0, m2, 0, k, x2, x1);
        lower_transpose_solve(l11, k, x1);
    }
}

}  // namespace

void register_dense_rfp(nb::module_ m) {
    m.def("rfp_cholesky_solve", &rfp_cholesky_solve, nb::arg("a"), nb::arg("n"), nb::arg("X"),
          nb::call_guard<nb::gil_scoped_release>(),
          "X ← (LLᵀ)⁻¹X in place for L the lower RFP factor `a` of order n (spftrf's, TRANSR='N') "
          "and each row of the float32 X (m × n).");
}

}  // namespace svmkit
