// Small dense float64 systems of the SMO solver's Newton steps: products as NumPy's np.dot hands
// them to SciPy's BLAS (so that sums run in the same order), and a Cholesky factorisation
// blocked in panels that drops dependent rows.
#pragma once

#include "common.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace svmkit {

// Columns of one panel of the blocked factorisation: factored in scalar loops, the rest of the
// matrix then updated by matrix products.
constexpr i64 PANEL = 64;

// A row-major float64 matrix; made uninitialised (`zeros`: zero-filled), as the steps write
// most of their matrices whole.
struct Matrix {
    i64 rows = 0, cols = 0;
    std::unique_ptr<double[]> v;

    Matrix() = default;
    Matrix(i64 r, i64 c) : rows(r), cols(c), v(new double[static_cast<std::size_t>(r * c)]) {}
    Matrix(const Matrix &o) : Matrix(o.rows, o.cols) { std::copy(o.data(), o.data() + rows * cols, data()); }
    Matrix(Matrix &&) noexcept = default;
    Matrix &operator=(const Matrix &o) { return *this = Matrix(o); }
    Matrix &operator=(Matrix &&) noexcept = default;
    static Matrix zeros(i64 r, i64 c) {
        Matrix A(r, c);
        std::fill(A.data(), A.data() + r * c, 0.0);
        return A;
    }
    double *operator[](i64 i) { return v.get() + i * cols; }
    const double *operator[](i64 i) const { return v.get() + i * cols; }
    double *data() { return v.get(); }
    const double *data() const { return v.get(); }
};

// xᵀy by BLAS's ddot.
double dot(i64 n, const double *x, const double *y);
// out = M x (M: r × c, x: c values).
void mat_vec(const Matrix &M, const double *x, double *out);
// out = xᵀ M (x: r values, M: r × c).
void vec_mat(const double *x, const Matrix &M, double *out);
// out (m × n) = op(A)·B for B: k × n row-major, A: m × k row-major, or with `a_transposed` the
// transpose of a k × m row-major array; a vector operand (m or n = 1) goes to ddot or dgemv,
// as np.dot sends it.
void product(i64 m, i64 n, i64 k, const double *A, bool a_transposed, const double *B, double *out);

// X with RᵀX = B (R upper triangular with a nonzero diagonal, B: k × r), by panels of PANEL
// rows, each panel's product with the rows solved before it by BLAS, so that many right-hand
// sides cost little more than one.
Matrix forward_solve(const Matrix &R, const Matrix &B);
// X with RᵀR X = B: `forward_solve`, then back substitution by the same panels.
Matrix cholesky_solve(const Matrix &R, const Matrix &B);
// Upper triangular R with H = RᵀR on the rows it keeps: row i is dropped (its row and column of
// R left zero, kept[i] = 0) when its pivot, what H_ii adds beyond the rows kept before it, is at
// most `floor`. Blocked (panels of PANEL columns, the trailing matrix updated by BLAS products),
// so it runs near the speed of LAPACK's Cholesky. Reads the upper triangle of H only.
Matrix independent_cholesky(const Matrix &H, double floor, std::vector<std::uint8_t> &kept);

}  // namespace svmkit
