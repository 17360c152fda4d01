// K + sI solved from K's rows without the N × N matrix: K's lower triangle in float64 in LAPACK's
// packed format (column by column) for the products, K + sI in float32 in the RFP format for
// spftrf; and diag(H⁻¹) from the float64 factor's triangular inverse.
#include "dense.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace svmkit {

namespace {

// Columns per tile in which the rows of K are written across the RFP array.
constexpr i64 STORE_TILE = 64;

// Start of column q in the packed lower triangle of order n.
inline i64 packed_start(i64 q, i64 n) { return q * n - q * (q - 1) / 2; }

// Rows of K with any row stride (a block cut from a wider one), each row contiguous.
using Rows = nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>;

void check_triangle(i64 n, i64 size, const char *what) {
    if (n < 0 || size != triangle_size(n))
        throw std::invalid_argument(std::string(what) + " does not hold a triangle of the order given");
}

// Rows lo … lo + len(block) − 1 of K (block[r, j − lo] = K[lo + r, j], j ≥ lo + r used) into the
// packed float64 lower triangle and, plus shift on the diagonal, the float32 RFP one.
void store_rows(Rows block, i64 lo, i64 n, double shift, Vec<double> packed, Vec<float> rfp) {
    check_triangle(n, i64(packed.shape(0)), "packed");
    check_triangle(n, i64(rfp.shape(0)), "rfp");
    const i64 h = i64(block.shape(0)), rs = block.stride(0);
    if (lo < 0 || lo + h > n || (h > 0 && i64(block.shape(1)) < n - lo))
        throw std::invalid_argument("the block does not hold rows lo … lo + len(block) − 1 of K from column lo on");
    if (h > 0 && n - lo > 1 && block.stride(1) != 1)
        throw std::invalid_argument("the block's rows must be contiguous");
    const auto [e, k, ld] = rfp_layout(n);
    const double *b = block.data();
    double *P = packed.data();
    float *R = rfp.data();
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 r = 0; r < h; ++r) {
        const i64 q = lo + r, m = n - q;
        const double *src = b + r * rs + r;
        std::copy(src, src + m, P + packed_start(q, n));
        if (q < k) {  // column q of the triangle is a column of the RFP array
            float *col = R + q + e + q * ld;
            for (i64 t = 0; t < m; ++t)
                col[t] = float(src[t]);
            col[0] = float(src[0] + shift);
        }
    }
    // columns q ≥ k are rows of the RFP array (L22ᵀ): written along its columns, tile by tile
    const i64 hi = lo + h, q0 = std::max(lo, k);
    const i64 tiles = q0 < hi ? (n - q0 + STORE_TILE - 1) / STORE_TILE : 0;
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 tile = 0; tile < tiles; ++tile) {
        const i64 p_end = std::min(n, q0 + (tile + 1) * STORE_TILE);
        for (i64 p = q0 + tile * STORE_TILE; p < p_end; ++p) {
            float *col = R + (p - k + 1 - e) * ld;
            const i64 q_end = std::min(hi, p + 1);
            for (i64 q = q0; q < q_end; ++q)
                col[q - k] = float(b[(q - lo) * rs + (p - lo)] + (q == p ? shift : 0.0));
        }
    }
}

// y += the part of K·x held by columns j0 … j1 − 1 of K's packed lower triangle: each column's
// dot product with x into y[j], and its entries below the diagonal times x[j] into y[j + 1:]
// (two loops, each of which vectorises; fused, neither does).
SVMKIT_CLONES void columns_product(const double *__restrict packed, i64 n, const double *__restrict x,
                                   double *__restrict y, i64 j0, i64 j1) {
    for (i64 j = j0; j < j1; ++j) {
        const i64 m = n - j;
        const double *a = packed + packed_start(j, n), *xs = x + j;
        double *ys = y + j;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (i64 t = 0; t < m; ++t)
            s += a[t] * xs[t];
        const double xj = x[j];
        for (i64 t = 1; t < m; ++t)
            ys[t] += a[t] * xj;
        y[j] += s;
    }
}

// out = P·K (P: m × n, one vector a row) for K given by its packed lower triangle: each of
// `parts` parts takes a run of columns holding about as many entries, into its own accumulator;
// the accumulators are summed at the end, in order.
void packed_products(Vec<const double> packed, i64 n, Mat<const double> P, i64 parts, Mat<double> out) {
    check_triangle(n, i64(packed.shape(0)), "packed");
    const i64 m = i64(P.shape(0));
    if (i64(P.shape(1)) != n || i64(out.shape(0)) != m || i64(out.shape(1)) != n)
        throw std::invalid_argument("P and out must both be m × n");
    if (parts < 1)
        throw std::invalid_argument("parts must be at least 1");
    const i64 total = triangle_size(n);
    std::vector<i64> bounds(size_t(parts + 1), n);
    bounds[0] = 0;
    i64 j = 0;
    for (i64 part = 1; part < parts; ++part) {
        while (j < n && packed_start(j, n) < total * part / parts)
            ++j;
        bounds[size_t(part)] = j;
    }
    std::vector<double> acc(size_t(parts * m * n), 0.0);
    const double *a = packed.data(), *p = P.data();
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 part = 0; part < parts; ++part)
        for (i64 c = 0; c < m; ++c)
            columns_product(a, n, p + c * n, acc.data() + (part * m + c) * n, bounds[size_t(part)],
                            bounds[size_t(part + 1)]);
    double *o = out.data();
    std::fill(o, o + m * n, 0.0);
    for (i64 part = 0; part < parts; ++part) {
        const double *src = acc.data() + part * m * n;
        for (i64 i = 0; i < m * n; ++i)
            o[i] += src[i];
    }
}

// out[j] = Σ_{i ≥ j} L[i, j]² for each column j of the lower triangle L = Aᵀ (A's row j holds L's
// column j); what lies above L's diagonal is never read (trtri leaves the factor's other
// triangle there). Each sum in order, from the diagonal down.
void lower_column_sq_norms(Mat<const double> A, Vec<double> out) {
    const i64 n = i64(A.shape(0));
    if (i64(A.shape(1)) != n || i64(out.shape(0)) != n)
        throw std::invalid_argument("A must be n × n and out of length n");
    const double *a = A.data();
    double *o = out.data();
#pragma omp parallel for num_threads(threads()) schedule(static)
    for (i64 j = 0; j < n; ++j) {
        const double *col = a + j * n + j;
        double s = 0.0;
        for (i64 t = 0; t < n - j; ++t)
            s += col[t] * col[t];
        o[j] = s;
    }
}

}  // namespace

void register_dense(nb::module_ m) {
    m.def("rfp_layout", [](i64 n) {
              if (n < 0)
                  throw std::invalid_argument("the order must not be negative");
              const RfpLayout l = rfp_layout(n);
              return nb::make_tuple(l.e, l.k, l.ld);
          }, nb::arg("n"),
          "(e, k, ld) of LAPACK's lower RFP layout with TRANSR='N' for order n: e = 1 for even n; the "
          "first k columns of the triangle are stored as columns of an ld-row Fortran array, the rest "
          "transposed in its upper part. Column q, rows p ≥ q: at p + e + q·ld for q < k, else at "
          "(q − k) + (p − k + 1 − e)·ld.");
    m.def("store_rows", &store_rows, nb::arg("block"), nb::arg("lo"), nb::arg("n"), nb::arg("shift"),
          nb::arg("packed"), nb::arg("rfp"), nb::call_guard<nb::gil_scoped_release>(),
          "Rows lo … lo + len(block) − 1 of K (block[r, j − lo] = K[lo + r, j], j ≥ lo + r used; each row "
          "contiguous, any row stride) into the packed float64 lower triangle and, plus shift on the "
          "diagonal, the float32 RFP one (both of order n).");
    m.def("packed_products", &packed_products, nb::arg("packed"), nb::arg("n"), nb::arg("P"), nb::arg("parts"),
          nb::arg("out"), nb::call_guard<nb::gil_scoped_release>(),
          "out = P·K for K given by its packed lower triangle and P (m × n, one vector a row), in `parts` "
          "runs of columns holding about as many entries each, summed in order.");
    m.def("lower_column_sq_norms", &lower_column_sq_norms, nb::arg("A"), nb::arg("out"),
          nb::call_guard<nb::gil_scoped_release>(),
          "out[j] = Σ_{i ≥ j} L[i, j]² for each column j of the lower triangle L = Aᵀ (A's row j holds "
          "L's column j); A's entries left of its diagonal are never read.");
    register_dense_rfp(m);
}

}  // namespace svmkit
