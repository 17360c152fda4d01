// Triangular solves with a Cholesky factor in LAPACK's lower RFP format (TRANSR='N'), in
// parallel, for the preconditioner of each conjugate gradient step: LAPACK's spftrs streams the
// factor at a fraction of the memory bandwidth. The factor
// L = [[L11, 0], [L21, L22]] sits in an ld-row Fortran array as L11 and L21 in its first k columns
// and L22ᵀ (upper) at its top (see `rfp_layout`).
//
// Each triangle is solved in blocks of BLOCK columns: the block's own triangle serially, its
// product with the rest of the vector in parallel (over rows, or over columns).
#include "dense.hpp"

#include <algorithm>
#include <cmath>
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

// Columns per block of the blocked Cholesky factorisation: each block's trailing update is a
// BLAS SYRK of inner dimension FACTOR_BLOCK, at close to GEMM speed.
constexpr i64 FACTOR_BLOCK = 256;

// The unblocked Cholesky factor of the column-major n × n block at a (leading dimension ld),
// lower (A = LLᵀ, column by column, each column's update a run over contiguous memory) or upper
// (A = UᵀU, each column of U by forward substitution with the columns before it). Returns 0, or
// the 1-based column whose pivot is not positive (LAPACK's info).
i64 unblocked_cholesky(bool lower, i64 n, float *a, i64 ld) {
    for (i64 j = 0; j < n; ++j) {
        float *cj = a + j * ld;
        float d;
        if (lower) {
            for (i64 p = 0; p < j; ++p) {
                const float *cp = a + p * ld;
                const float l = cp[j];
                for (i64 i = j; i < n; ++i)
                    cj[i] -= cp[i] * l;
            }
            d = cj[j];
        } else {
            d = cj[j];
            for (i64 i = 0; i < j; ++i) {
                const float *ci = a + i * ld;
                float s = cj[i];
                for (i64 p = 0; p < i; ++p)
                    s -= ci[p] * cj[p];
                cj[i] = s / ci[i];
                d -= cj[i] * cj[i];
            }
        }
        if (!(d > 0.0f))
            return j + 1;
        d = std::sqrt(d);
        cj[j] = d;
        if (lower)
            for (i64 i = j + 1; i < n; ++i)
                cj[i] /= d;
    }
    return 0;
}

// LAPACK's potrf (lower or upper) for the column-major n × n matrix at a: right-looking by
// blocks of FACTOR_BLOCK columns, each block factored unblocked, the panel beside it solved by
// TRSM and the trailing matrix updated by SYRK.
i64 blocked_cholesky(bool lower, i64 n, float *a, i64 ld) {
    const Blas &b = blas();
    const float one = 1.0f, minus_one = -1.0f;
    const int LD = int(ld);
    for (i64 j0 = 0; j0 < n; j0 += FACTOR_BLOCK) {
        const i64 jb = std::min(FACTOR_BLOCK, n - j0);
        float *diag = a + j0 + j0 * ld;
        if (const i64 info = unblocked_cholesky(lower, jb, diag, ld))
            return j0 + info;
        const int r = int(n - j0 - jb), k = int(jb);
        if (r == 0)
            break;
        if (lower) {
            float *panel = diag + jb;
            b.strsm("R", "L", "T", "N", &r, &k, &one, diag, &LD, panel, &LD);
            b.ssyrk("L", "N", &r, &k, &minus_one, panel, &LD, &one, panel + jb * ld, &LD);
        } else {
            float *panel = diag + jb * ld;
            b.strsm("L", "U", "T", "N", &k, &r, &one, diag, &LD, panel, &LD);
            b.ssyrk("U", "T", &r, &k, &minus_one, panel, &LD, &one, panel + jb, &LD);
        }
    }
    return 0;
}

// LAPACK's spftrf for the lower RFP matrix `a` of order n (TRANSR='N') in place: L11 by Cholesky,
// L21 = A21 L11⁻ᵀ, then A22 − L21 L21ᵀ (held as its upper transpose) by Cholesky, each
// Cholesky blocked (`blocked_cholesky`) where the BLAS's own potrf runs at a fraction of its
// GEMM speed (OpenBLAS 0.3). Returns LAPACK's info.
i64 rfp_cholesky(Vec<float> a, i64 n) {
    if (n < 0 || i64(a.shape(0)) != triangle_size(n))
        throw std::invalid_argument("the array does not hold a triangle of order n");
    if (n == 0)
        return 0;
    const auto [e, k, ld] = rfp_layout(n);
    float *l11 = a.data() + e, *l21 = a.data() + k + e, *u = a.data() + (e ? 0 : ld);
    if (const i64 info = blocked_cholesky(true, k, l11, ld))
        return info;
    const int m2 = int(n - k), K = int(k), LD = int(ld);
    const float one = 1.0f, minus_one = -1.0f;
    if (m2 == 0)
        return 0;
    blas().strsm("R", "L", "T", "N", &m2, &K, &one, l11, &LD, l21, &LD);
    blas().ssyrk("U", "N", &m2, &K, &minus_one, l21, &LD, &one, u, &LD);
    const i64 info = blocked_cholesky(false, m2, u, ld);
    return info ? info + k : 0;
}

}  // namespace

void register_dense_rfp(nb::module_ m) {
    m.def("rfp_cholesky", &rfp_cholesky, nb::arg("a"), nb::arg("n"), nb::call_guard<nb::gil_scoped_release>(),
          "LAPACK's spftrf (TRANSR='N', UPLO='L') in place on the float32 RFP array `a` of order n, its two "
          "Cholesky factorisations blocked over BLAS TRSM and SYRK; returns LAPACK's info (0: done; j > 0: "
          "the leading minor of order j is not positive definite).");
    m.def("rfp_cholesky_solve", &rfp_cholesky_solve, nb::arg("a"), nb::arg("n"), nb::arg("X"),
          nb::call_guard<nb::gil_scoped_release>(),
          "X ← (LLᵀ)⁻¹X in place for L the lower RFP factor `a` of order n (spftrf's, TRANSR='N') "
          "and each row of the float32 X (m × n).");
}

}  // namespace svmkit
