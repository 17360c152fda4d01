// Kernel transforms of inner-product blocks, and the sparse scatter of inner products.
//
// Each transform takes the inner-product block P = A Bᵀ and writes kernel values into rows
// `out_rows` of `out`, in parallel over rows; `out` may be wider than P (a row cache with room
// for columns to come), its first columns written. The RBF exponential is evaluated inline (range
// reduction to 2^k · e^r with |r| ≤ ln2/2 and a degree-11 Taylor polynomial, relative error
// < 1e-14) so that the loops vectorise; a library `exp` call would not. Its multiply-adds are
// fused (std::fma): one rounding each, the same on every host, in half the instructions where
// the host has FMA (the clones below).
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

// Clones of the hot rows beyond SVMKIT_CLONES's. The RBF rows fuse multiply-adds: AVX-512F
// implies FMA, AVX2 does not, so their middle clone is x86-64-v3 (AVX2 with FMA); without FMA,
// std::fma is a library call. The other kernels' rows, bound by memory or by library calls,
// run faster with AVX2's 32-byte accesses than with AVX-512's 64-byte ones on rows NumPy aligns
// to 16 bytes.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define SVMKIT_FMA_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#define SVMKIT_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SVMKIT_FMA_CLONES SVMKIT_CLONES
#define SVMKIT_AVX2_CLONES SVMKIT_CLONES
#endif

namespace svmkit {

namespace {

constexpr int POLY = 1, RBF = 2, SIGMOID = 3;

constexpr double LN2 = 0.6931471805599453;  // the double nearest ln 2
// 1/i!, i = 0 … 11: e^r's Taylor coefficients
constexpr double INV_FACT[12] = {1.0,         1.0,          1.0 / 2.0,       1.0 / 6.0,
                                 1.0 / 24.0,  1.0 / 120.0,  1.0 / 720.0,     1.0 / 5040.0,
                                 1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0};
// 2^52 + 1023: k + this holds k + 1023, 2^k's biased exponent, in its low bits
constexpr double EXP_BIAS = 4503599627371519.0;

inline double from_bits(std::uint64_t bits) {
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

inline std::uint64_t to_bits(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
}

// Python's max(a, b), which keeps a unless b is greater, chosen bit by bit: as a branch, GCC
// would evaluate the exponential of a constant b apart and no longer vectorise the loop.
inline double max_of(double a, double b) {
    const std::uint64_t take_b = -std::uint64_t(std::isless(a, b));
    return from_bits((to_bits(a) & ~take_b) | (to_bits(b) & take_b));
}

// floor(y), as the nearest integer less one where that is above y: under GCC's default
// -ftrapping-math, std::floor and a conditional subtraction would each keep the loop scalar
// (std::nearbyint raises no exception, and vectorises).
inline double floor_of(double y) {
    const double t = std::nearbyint(y);
    const std::uint64_t above = -std::uint64_t(std::isless(y, t));
    return t - from_bits(to_bits(1.0) & above);
}

// Horner's scheme for the coefficients INV_FACT[I], …, INV_FACT[0], unrolled at compile time: a
// loop of std::fma is not, and would keep the loop over values from vectorising.
template <int I> inline double horner(double p, double r) {
    if constexpr (I < 0)
        return p;
    else
        return horner<I - 1>(std::fma(p, r, INV_FACT[I]), r);
}

// e^x for x ≤ 0, as 2^k e^r, |r| ≤ ln2/2. 2^k is assembled from its IEEE-754 bits, without an
// integer conversion, so that every loop calling this vectorises; x is clipped at −708
// (e^−708 ≈ 3e−308, zero in float32 and below any kernel value that matters).
inline double exp_nonpositive(double x) {
    const double v = max_of(x, -708.0);
    const double k = floor_of(std::fma(v, 1.0 / LN2, 0.5));
    const double r = std::fma(-k, LN2, v);
    const double scale = from_bits(to_bits(k + EXP_BIAS) << 52);
    return horner<10>(INV_FACT[11], r) * scale;
}

// The hot rows, one clone per instruction set; a template's clones are these instantiations'.
#define SVMKIT_EACH_OUT(MACRO) MACRO(float) MACRO(double)

// out[j] = exp(−γ max(||a||² + ||b_j||² − 2p[j], 0)); ||a||² + ||b_j||² in P's precision.
#define SVMKIT_RBF_ROW(P, O)                                                                      \
    SVMKIT_FMA_CLONES void rbf_row(const P *p, P a_sq, const P *b_sq, double gamma, O *out, i64 n) {  \
        for (i64 j = 0; j < n; ++j) {                                                             \
            const P ab = a_sq + b_sq[j];                                                          \
            out[j] = O(exp_nonpositive(-gamma * max_of(ab - 2.0 * p[j], 0.0)));                    \
        }                                                                                         \
    }
SVMKIT_RBF_ROW(float, float)
SVMKIT_RBF_ROW(float, double)
SVMKIT_RBF_ROW(double, float)
SVMKIT_RBF_ROW(double, double)
#undef SVMKIT_RBF_ROW

// Columns of a tile of direct_row: its squared distances stay in the L1 cache while the
// features are summed into them.
constexpr i64 DIRECT_TILE = 512;

// out[j] = exp(−γ ||x_i − x_j||²) over the n columns of Xt (d × n), from the differences
// themselves, summed feature by feature.
#define SVMKIT_DIRECT_ROW(O)                                                                       \
    SVMKIT_FMA_CLONES void direct_row(const double *Xt, i64 d, i64 n, i64 i, double gamma, O *out) { \
        double x[DIRECT_TILE];                                                                     \
        for (i64 lo = 0; lo < n; lo += DIRECT_TILE) {                                              \
            const i64 m = std::min(DIRECT_TILE, n - lo);                                           \
            for (i64 j = 0; j < m; ++j)                                                            \
                x[j] = 0.0;                                                                        \
            for (i64 k = 0; k < d; ++k) {                                                          \
                const double *col = Xt + k * n + lo;                                               \
                const double xi = Xt[k * n + i];                                                   \
                for (i64 j = 0; j < m; ++j) {                                                      \
                    const double diff = col[j] - xi;                                               \
                    x[j] = std::fma(diff, diff, x[j]);                                             \
                }                                                                                  \
            }                                                                                      \
            for (i64 j = 0; j < m; ++j)                                                            \
                out[lo + j] = O(exp_nonpositive(x[j] * -gamma));                                   \
        }                                                                                          \
    }
SVMKIT_EACH_OUT(SVMKIT_DIRECT_ROW)
#undef SVMKIT_DIRECT_ROW

// A kernel: which (code: LINEAR 0, POLY, RBF, SIGMOID) and its parameters.
struct KernelParams {
    int code;
    double gamma, coef0, degree;
};

// out[j] = (γp[j] + coef0)^degree (poly), tanh(γp[j] + coef0) (sigmoid) or p[j] (linear; nothing
// to do in place). The library calls take their arguments from a tile computed before them,
// which they run faster from than from a loop that computes each in turn.
constexpr i64 OTHER_TILE = 256;
#define SVMKIT_OTHER_ROW(P, O)                                                                     \
    SVMKIT_AVX2_CLONES void other_row(const P *p, const KernelParams &k, O *out, i64 n) {                    \
        if (k.code != POLY && k.code != SIGMOID) {                                                 \
            if (!std::is_same<P, O>::value || static_cast<const void *>(out) != p)                 \
                for (i64 j = 0; j < n; ++j)                                                        \
                    out[j] = O(p[j]);                                                              \
            return;                                                                                \
        }                                                                                          \
        const double gamma = k.gamma, coef0 = k.coef0, degree = k.degree;                          \
        const bool poly = k.code == POLY;                                                          \
        double base[OTHER_TILE];                                                                   \
        for (i64 lo = 0; lo < n; lo += OTHER_TILE) {                                               \
            const i64 m = std::min(OTHER_TILE, n - lo);                                            \
            for (i64 j = 0; j < m; ++j)                                                            \
                base[j] = gamma * p[lo + j] + coef0;                                               \
            O *o = out + lo;                                                                       \
            if (poly)                                                                              \
                for (i64 j = 0; j < m; ++j)                                                        \
                    o[j] = O(std::pow(base[j], degree));                                           \
            else                                                                                   \
                for (i64 j = 0; j < m; ++j)                                                        \
                    o[j] = O(std::tanh(base[j]));                                                  \
        }                                                                                          \
    }
SVMKIT_OTHER_ROW(float, float)
SVMKIT_OTHER_ROW(float, double)
SVMKIT_OTHER_ROW(double, float)
SVMKIT_OTHER_ROW(double, double)
#undef SVMKIT_OTHER_ROW

// How many values of row exceed `floor`: one pass that vectorises, which most rows end at.
#define SVMKIT_COUNT_ABOVE(O)                                                                      \
    SVMKIT_CLONES i64 count_above(const O *row, i64 n, double floor) {                             \
        i64 above = 0;                                                                             \
        for (i64 j = 0; j < n; ++j)                                                                \
            above += double(row[j]) > floor;                                                       \
        return above;                                                                              \
    }
SVMKIT_EACH_OUT(SVMKIT_COUNT_ABOVE)
#undef SVMKIT_COUNT_ABOVE

SVMKIT_CLONES double sq_distance(const double *a, const double *b, i64 d) {
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (i64 k = 0; k < d; ++k) {
        const double diff = a[k] - b[k];
        s += diff * diff;
    }
    return s;
}

void require(bool ok, const char *what) {
    if (!ok)
        throw std::invalid_argument(what);
}

// Every value of `rows` is a row of a matrix of `n` rows.
void check_rows(const i64 *rows, i64 count, i64 n, const char *what) {
    for (i64 r = 0; r < count; ++r)
        if (rows[r] < 0 || rows[r] >= n)
            throw std::invalid_argument(std::string(what) + " holds a row out of range");
}

template <class P, class O>
void finish_rbf(Mat<const P> Pm, Vec<const P> a_sq, Vec<const P> b_sq, double gamma, Mat<O> out,
                Vec<const i64> out_rows, i64 size) {
    const i64 q = i64(Pm.shape(0)), n = i64(Pm.shape(1)), stride = i64(out.shape(1));
    require(stride >= n && i64(out_rows.shape(0)) == q, "out and out_rows must fit P's shape");
    require(i64(a_sq.shape(0)) == q && i64(b_sq.shape(0)) == n, "a_sq and b_sq must have P's rows and columns");
    require(size > 0, "size must be positive");
    check_rows(out_rows.data(), q, i64(out.shape(0)), "out_rows");
    const P *p = Pm.data(), *a = a_sq.data(), *b = b_sq.data();
    const i64 *rows = out_rows.data();
    O *o = out.data();
    const i64 chunks = (q + size - 1) / size;
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 c = 0; c < chunks; ++c) {
        const i64 end = std::min(q, (c + 1) * size);
        for (i64 r = c * size; r < end; ++r)
            rbf_row(p + r * n, a[r], b, gamma, o + rows[r] * stride, n);
    }
}

template <class P, class O>
void finish_other(Mat<const P> Pm, int code, double gamma, double coef0, double degree, Mat<O> out,
                  Vec<const i64> out_rows) {
    const i64 q = i64(Pm.shape(0)), n = i64(Pm.shape(1)), stride = i64(out.shape(1));
    require(stride >= n && i64(out_rows.shape(0)) == q, "out and out_rows must fit P's shape");
    check_rows(out_rows.data(), q, i64(out.shape(0)), "out_rows");
    const P *p = Pm.data();
    const i64 *rows = out_rows.data();
    O *o = out.data();
    const KernelParams params{code, gamma, coef0, degree};
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 r = 0; r < q; ++r)
        other_row(p + r * n, params, o + rows[r] * stride, n);
}

template <class O>
void rbf_rows_direct(Mat<const double> Xt, Vec<const i64> idx, double gamma, Mat<O> out, Vec<const i64> out_rows,
                     i64 size) {
    const i64 d = i64(Xt.shape(0)), n = i64(Xt.shape(1)), q = i64(idx.shape(0)), stride = i64(out.shape(1));
    require(stride >= n && i64(out_rows.shape(0)) == q, "out and out_rows must fit Xt's columns and idx");
    require(size >= 0, "size must not be negative");
    check_rows(idx.data(), q, n, "idx");
    check_rows(out_rows.data(), q, i64(out.shape(0)), "out_rows");
    const double *xt = Xt.data();
    const i64 *points = idx.data(), *rows = out_rows.data();
    O *o = out.data();
    const i64 step = size > 0 ? size : std::max<i64>(q, 1);
    const i64 chunks = (q + step - 1) / step;
#pragma omp parallel for num_threads(threads()) schedule(static) if (size > 0)
    for (i64 c = 0; c < chunks; ++c) {
        const i64 end = std::min(q, (c + 1) * step);
        for (i64 r = c * step; r < end; ++r)
            direct_row(xt, d, n, points[r], gamma, o + rows[r] * stride);
    }
}

// Columns a refinement pass counts at once: a row with a close pair (its own column, when the
// point is a training row, and any copy of it) is looked at value by value in that tile only.
constexpr i64 REFINE_TILE = 256;
// Kernel values below which a refinement runs on the calling thread alone.
constexpr i64 PARALLEL_VALUES = 1 << 16;

template <class O>
void refine_rbf_rows(Mat<O> out, Vec<const i64> out_rows, Vec<const i64> idx, Mat<const double> X,
                     Vec<const double> sq, double gamma, double noise) {
    const i64 n = i64(X.shape(0)), d = i64(X.shape(1)), q = i64(idx.shape(0)), stride = i64(out.shape(1));
    require(stride >= n && i64(out_rows.shape(0)) == q, "out and out_rows must fit X's rows and idx");
    require(i64(sq.shape(0)) == n, "sq must have X's rows");
    check_rows(idx.data(), q, n, "idx");
    check_rows(out_rows.data(), q, i64(out.shape(0)), "out_rows");
    if (q == 0)
        return;
    const double *x = X.data(), *s2 = sq.data();
    double sq_max = s2[0];
    for (i64 j = 1; j < n; ++j)
        sq_max = s2[j] > sq_max || std::isnan(s2[j]) ? s2[j] : sq_max;
    const i64 *points = idx.data(), *rows = out_rows.data();
    O *o = out.data();
    // a few rows (one class pair's) are not worth waking the other threads for
#pragma omp parallel for num_threads(threads()) schedule(static) if (q * n >= PARALLEL_VALUES)
    for (i64 r = 0; r < q; ++r) {
        const i64 i = points[r];
        O *row = o + rows[r] * stride;
        // no value below this one is close enough to look at; most rows have none above it
        const double floor = std::exp(-gamma * noise * (s2[i] + sq_max));
        for (i64 lo = 0; lo < n; lo += REFINE_TILE) {
            const i64 hi = std::min(n, lo + REFINE_TILE);
            if (count_above(row + lo, hi - lo, floor) == 0)
                continue;
            for (i64 j = lo; j < hi; ++j)
                if (double(row[j]) > floor && double(-std::log(row[j])) < gamma * noise * (s2[i] + s2[j]))
                    row[j] = O(std::exp(-gamma * sq_distance(x + i * d, x + j * d, d)));
        }
    }
}

void sparse_inner_rows(Vec<const i64> a_indptr, Vec<const i64> a_indices, Vec<const double> a_data,
                       Vec<const i64> rows, Vec<const i64> b_indptr, Vec<const i64> b_indices,
                       Vec<const double> b_data, Mat<double> out) {
    const i64 q = i64(rows.shape(0)), n_out = i64(out.shape(1));
    const i64 a_rows = i64(a_indptr.shape(0)) - 1, b_cols = i64(b_indptr.shape(0)) - 1;
    const i64 a_nnz = std::min(i64(a_indices.shape(0)), i64(a_data.shape(0)));
    const i64 b_nnz = std::min(i64(b_indices.shape(0)), i64(b_data.shape(0)));
    require(i64(out.shape(0)) == q, "out must have a row for each of rows");
    require(a_rows >= 0 && b_cols >= 0, "indptr arrays must not be empty");
    check_rows(rows.data(), q, a_rows, "rows");
    const i64 *ap = a_indptr.data(), *ai = a_indices.data(), *r_of = rows.data();
    const i64 *bp = b_indptr.data(), *bi = b_indices.data();
    const double *av = a_data.data(), *bv = b_data.data();
    // the parts the scatter reads: the rows asked for and the columns they touch
    for (i64 r = 0; r < q; ++r) {
        const i64 i = r_of[r];
        require(0 <= ap[i] && ap[i] <= ap[i + 1] && ap[i + 1] <= a_nnz, "a_indptr is not a CSR row pointer");
        for (i64 k = ap[i]; k < ap[i + 1]; ++k) {
            const i64 j = ai[k];
            require(0 <= j && j < b_cols, "a_indices holds a column B does not have");
            require(0 <= bp[j] && bp[j] <= bp[j + 1] && bp[j + 1] <= b_nnz, "b_indptr is not a CSC column pointer");
        }
    }
    double *o = out.data();
    bool bad = false;
#pragma omp parallel for num_threads(threads()) schedule(static) reduction(|| : bad)
    for (i64 r = 0; r < q; ++r) {
        double *acc = o + r * n_out;
        const i64 i = r_of[r];
        for (i64 k = ap[i]; k < ap[i + 1]; ++k) {
            const i64 j = ai[k];
            const double v = av[k];
            for (i64 t = bp[j]; t < bp[j + 1]; ++t) {
                const i64 s = bi[t];
                if (std::uint64_t(s) < std::uint64_t(n_out))
                    acc[s] += v * bv[t];
                else
                    bad = true;
            }
        }
    }
    require(!bad, "b_indices holds a row out of out's columns");
}

// Rows and columns of one tile of float32 RBF training rows: 128 × 1,024 inner products (512 KB)
// stay in a core's cache from their SGEMM to their exponential.
constexpr i64 ROW_TILE_ROWS = 128, ROW_TILE_COLS = 1024;

// out[out_rows[r], j] = exp(−γ max(a_sq[r] + c_sq[j] − 2<A_r, C_j>, 0)) for float32 rows A and
// columns C, by tiles whose inner products never leave the cache: the pass over a GEMM's whole
// result that follows it otherwise reads and writes memory at its bandwidth. Each tile's SGEMM
// runs on one thread, so the values are the same on any number of threads.
void rbf_rows_gemm(Mat<const float> A, Vec<const float> a_sq, Mat<const float> C, Vec<const float> c_sq, double gamma,
                   Mat<float> out, Vec<const i64> out_rows) {
    const i64 q = i64(A.shape(0)), d = i64(A.shape(1)), n = i64(C.shape(0)), stride = i64(out.shape(1));
    require(i64(C.shape(1)) == d, "A and C must have the same features");
    require(i64(a_sq.shape(0)) == q && i64(c_sq.shape(0)) == n, "a_sq and c_sq must have A's and C's rows");
    require(stride >= n && i64(out_rows.shape(0)) == q, "out and out_rows must fit C's rows and A's");
    check_rows(out_rows.data(), q, i64(out.shape(0)), "out_rows");
    const float *a = A.data(), *c = C.data(), *as = a_sq.data(), *cs = c_sq.data();
    const i64 *rows = out_rows.data();
    float *o = out.data();
    const i64 row_tiles = (q + ROW_TILE_ROWS - 1) / ROW_TILE_ROWS, col_tiles = (n + ROW_TILE_COLS - 1) / ROW_TILE_COLS;
#pragma omp parallel num_threads(threads()) if (row_tiles * col_tiles > 1)
    {
        std::vector<float> buf(ROW_TILE_ROWS * std::min(n, ROW_TILE_COLS));
#pragma omp for schedule(dynamic)
        for (i64 tile = 0; tile < row_tiles * col_tiles; ++tile) {
            const i64 r0 = (tile / col_tiles) * ROW_TILE_ROWS, c0 = (tile % col_tiles) * ROW_TILE_COLS;
            const i64 m = std::min(ROW_TILE_ROWS, q - r0), w = std::min(ROW_TILE_COLS, n - c0);
            gemm(false, true, m, w, d, 1.0f, a + r0 * d, d, c + c0 * d, d, 0.0f, buf.data(), w);
            for (i64 r = 0; r < m; ++r)
                rbf_row(buf.data() + r * w, as[r0 + r], cs + c0, gamma, o + rows[r0 + r] * stride + c0, w);
        }
    }
}

// Rows and columns of one tile of kernel values at prediction: 64 × 1,024 float64 (512 KB) stay
// in a core's cache from their GEMM through their transform to their product with W.
constexpr i64 PRODUCT_ROWS = 64, PRODUCT_COLS = 1024;

// out = K(X, C) W for dense rows: by tiles of rows (threads take them in turn) and of centres,
// each tile's values a GEMM, the kernel's transform and a GEMM with W's rows of those centres.
void dense_products(Mat<const double> X, Vec<const double> x_sq, Mat<const double> C, Vec<const double> c_sq,
                    Mat<const double> W, const KernelParams &k, Mat<double> out) {
    const i64 n = i64(X.shape(0)), d = i64(X.shape(1)), m = i64(C.shape(0)), t = i64(W.shape(1));
    require(i64(C.shape(1)) == d, "X and C must have the same features");
    require(i64(W.shape(0)) == m, "W must have one row per centre");
    require(i64(out.shape(0)) == n && i64(out.shape(1)) == t, "out must be X's rows × W's columns");
    const bool rbf = k.code == RBF;
    require(!rbf || (i64(x_sq.shape(0)) == n && i64(c_sq.shape(0)) == m), "x_sq and c_sq must have X's and C's rows");
    if (n == 0 || t == 0)
        return;
    if (m == 0) {
        std::fill(out.data(), out.data() + n * t, 0.0);
        return;
    }
    const double *x = X.data(), *c = C.data(), *w = W.data(), *xs = x_sq.data(), *cs = c_sq.data();
    double *o = out.data();
    const i64 tiles = (n + PRODUCT_ROWS - 1) / PRODUCT_ROWS, width = std::min(m, PRODUCT_COLS);
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> buf(PRODUCT_ROWS * width);
#pragma omp for schedule(dynamic)
        for (i64 tile = 0; tile < tiles; ++tile) {
            const i64 lo = tile * PRODUCT_ROWS, rows = std::min(PRODUCT_ROWS, n - lo);
            for (i64 c0 = 0; c0 < m; c0 += PRODUCT_COLS) {
                const i64 cols = std::min(PRODUCT_COLS, m - c0);
                double *b = buf.data();
                gemm(false, true, rows, cols, d, 1.0, x + lo * d, d, c + c0 * d, d, 0.0, b, cols);
                for (i64 r = 0; r < rows; ++r) {
                    if (rbf)
                        rbf_row(b + r * cols, xs[lo + r], cs + c0, k.gamma, b + r * cols, cols);
                    else
                        other_row(b + r * cols, k, b + r * cols, cols);
                }
                gemm(false, false, rows, t, cols, 1.0, b, cols, w + c0 * t, t, c0 == 0 ? 0.0 : 1.0, o + lo * t, t);
            }
        }
    }
}

}  // namespace

void register_kernels(nb::module_ m) {
    // Arrays are taken as they are, never converted: a converted `out` would be a copy written in
    // vain, and a converted input would pick another instantiation than its dtype's.
    auto array = [](const char *name) { return nb::arg(name).noconvert(); };
    const auto release = nb::call_guard<nb::gil_scoped_release>();

    const char *rbf_doc = "finish_rbf(P, a_sq, b_sq, gamma, out, out_rows, size): out[out_rows[r], j] = "
                          "exp(−γ max(a_sq[r] + b_sq[j] − 2P[r, j], 0)), in parallel chunks of `size` rows.";
#define SVMKIT_BIND_RBF(P, O)                                                                                  \
    m.def("finish_rbf", &finish_rbf<P, O>, array("P"), array("a_sq"), array("b_sq"), nb::arg("gamma"),        \
          array("out"), array("out_rows"), nb::arg("size"), release, rbf_doc);
    SVMKIT_BIND_RBF(float, float)
    SVMKIT_BIND_RBF(double, double)
    SVMKIT_BIND_RBF(double, float)
    SVMKIT_BIND_RBF(float, double)
#undef SVMKIT_BIND_RBF

    const char *other_doc =
        "finish_other(P, code, gamma, coef0, degree, out, out_rows): out[out_rows[r]] = (γP[r] + coef0)^degree "
        "(code 1, poly), tanh(γP[r] + coef0) (3, sigmoid) or P[r] (linear), in parallel over rows.";
#define SVMKIT_BIND_OTHER(P, O)                                                                                \
    m.def("finish_other", &finish_other<P, O>, array("P"), nb::arg("code"), nb::arg("gamma"), nb::arg("coef0"), \
          nb::arg("degree"), array("out"), array("out_rows"), release, other_doc);
    SVMKIT_BIND_OTHER(double, float)
    SVMKIT_BIND_OTHER(double, double)
    SVMKIT_BIND_OTHER(float, float)
    SVMKIT_BIND_OTHER(float, double)
#undef SVMKIT_BIND_OTHER

    const char *direct_doc =
        "rbf_rows_direct(Xt, idx, gamma, out, out_rows, size): out[out_rows[r], j] = exp(−γ ||x_idx[r] − x_j||²) "
        "over every column j of Xt (features × points), from the differences themselves: for few features this "
        "beats a GEMM and its extra pass. In parallel chunks of `size` rows; size 0: on the calling thread.";
#define SVMKIT_BIND_DIRECT(O)                                                                                  \
    m.def("rbf_rows_direct", &rbf_rows_direct<O>, array("Xt"), array("idx"), nb::arg("gamma"), array("out"),   \
          array("out_rows"), nb::arg("size"), release, direct_doc);
    SVMKIT_EACH_OUT(SVMKIT_BIND_DIRECT)
#undef SVMKIT_BIND_DIRECT

    const char *refine_doc =
        "refine_rbf_rows(out, out_rows, idx, X, sq, gamma, noise): recompute in float64, from the differences "
        "themselves, the RBF values of rows idx (in rows out_rows of out) whose squared distance d² is within "
        "noise·(sq_i + sq_j) of zero, where a float32 GEMM's ||a||² + ||b||² − 2<a, b> is mostly rounding. "
        "X: the float64 rows; sq: the squared norms the GEMM saw. In parallel over rows.";
#define SVMKIT_BIND_REFINE(O)                                                                                  \
    m.def("refine_rbf_rows", &refine_rbf_rows<O>, array("out"), array("out_rows"), array("idx"), array("X"),   \
          array("sq"), nb::arg("gamma"), nb::arg("noise"), release, refine_doc);
    SVMKIT_EACH_OUT(SVMKIT_BIND_REFINE)
#undef SVMKIT_BIND_REFINE

    m.def("rbf_rows_gemm", &rbf_rows_gemm, array("A"), array("a_sq"), array("C"), array("c_sq"), nb::arg("gamma"),
          array("out"), array("out_rows"), release,
          "rbf_rows_gemm(A, a_sq, C, c_sq, gamma, out, out_rows): out[out_rows[r], j] = exp(−γ max(a_sq[r] + c_sq[j] − "
          "2<A_r, C_j>, 0)) for float32 rows A and columns C, by 128 × 1,024 tiles, each an SGEMM on one thread "
          "whose result stays in cache through its exponential; threads take the tiles in turn.");
    bind_struct<KernelParams>(m, "KernelParams",
                              "A kernel's transform code (0 linear, 1 poly, 2 RBF, 3 sigmoid) and its gamma, coef0 "
                              "and degree.",
                              field("code", &KernelParams::code), field("gamma", &KernelParams::gamma),
                              field("coef0", &KernelParams::coef0), field("degree", &KernelParams::degree));
    m.def("dense_products", &dense_products, array("X"), array("x_sq"), array("C"), array("c_sq"), array("W"),
          nb::arg("kernel"), array("out"), release,
          "dense_products(X, x_sq, C, c_sq, W, kernel, out): out = K(X, C) W for dense float64 rows (x_sq, c_sq: "
          "the rows' squared norms, read by the RBF kernel only), by tiles of 64 rows × 1,024 centres whose "
          "values stay in cache from their GEMM to their product with W; threads take the row tiles in turn.");
    m.def("sparse_inner_rows", &sparse_inner_rows, array("a_indptr"), array("a_indices"), array("a_data"),
          array("rows"), array("b_indptr"), array("b_indices"), array("b_data"), array("out"), release,
          "out[r, s] += <A[rows[r]], B[s]>, with A in CSR parts and B in CSC parts (int64 indices, float64 values): "
          "for each nonzero a_j, a_j · B[s, j] is added over the nonzeros of column j, in parallel over rows.");
}

}  // namespace svmkit
