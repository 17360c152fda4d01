// The Newton steps' dense algebra (see smo_cholesky.hpp).
#include "smo_cholesky.hpp"

#include <algorithm>
#include <cmath>

namespace svmkit {

namespace {

void gemv(char trans, i64 m, i64 n, const double *A, i64 lda, const double *x, double *y) {
    const int M = int(m), N = int(n), LDA = int(lda), one = 1;
    const double alpha = 1.0, beta = 0.0;
    blas().dgemv(&trans, &M, &N, &alpha, A, &LDA, x, &one, &beta, y, &one);
}

// (R⁻¹)ᵀ on the kept rows of the upper triangular R (zero on the others).
Matrix inverse_upper_t(const Matrix &R, const std::uint8_t *kept) {
    const i64 nb = R.rows;
    Matrix Zt = Matrix::zeros(nb, nb);
    for (i64 c = 0; c < nb; ++c) {
        if (!kept[c])
            continue;
        Zt[c][c] = 1.0 / R[c][c];
        for (i64 i = c - 1; i >= 0; --i)
            if (kept[i])
                Zt[c][i] = -dot(c - i, R[i] + i + 1, Zt[c] + i + 1) / R[i][i];
    }
    return Zt;
}

// Rows r0..r0+nr, columns c0..c0+nc of A, as a matrix of their own.
Matrix part(const Matrix &A, i64 r0, i64 nr, i64 c0, i64 nc) {
    Matrix P(nr, nc);
    for (i64 i = 0; i < nr; ++i)
        std::copy(A[r0 + i] + c0, A[r0 + i] + c0 + nc, P[i]);
    return P;
}

}  // namespace

double dot(i64 n, const double *x, const double *y) {
    const int N = int(n), one = 1;
    return blas().ddot(&N, x, &one, y, &one);
}

void mat_vec(const Matrix &M, const double *x, double *out) {
    if (M.rows == 0 || M.cols == 0) {
        std::fill(out, out + M.rows, 0.0);
        return;
    }
    gemv('t', M.cols, M.rows, M.data(), M.cols, x, out);
}

void vec_mat(const double *x, const Matrix &M, double *out) {
    if (M.rows == 0 || M.cols == 0) {
        std::fill(out, out + M.cols, 0.0);
        return;
    }
    gemv('n', M.cols, M.rows, M.data(), M.cols, x, out);
}

void product(i64 m, i64 n, i64 k, const double *A, bool a_transposed, const double *B, double *out) {
    if (k == 0 || m == 0 || n == 0) {
        std::fill(out, out + m * n, 0.0);
        return;
    }
    if (n == 1) {
        if (m == 1)
            out[0] = dot(k, A, B);
        else if (a_transposed)
            gemv('n', m, k, A, m, B, out);
        else
            gemv('t', k, m, A, k, B, out);
        return;
    }
    if (m == 1) {
        gemv('n', n, k, B, n, A, out);
        return;
    }
    gemm(a_transposed, false, m, n, k, 1.0, A, a_transposed ? m : k, B, n, 0.0, out, n);
}

Matrix forward_solve(const Matrix &R, const Matrix &B) {
    const i64 k = B.rows, r = B.cols;
    Matrix X = B;
    for (i64 j0 = 0; j0 < k; j0 += PANEL) {
        const i64 j1 = std::min(k, j0 + PANEL);
        if (j0 > 0) {
            Matrix Rt(j1 - j0, j0);  // R[:j0, j0:j1]ᵀ
            for (i64 i = 0; i < j0; ++i)
                for (i64 t = j0; t < j1; ++t)
                    Rt[t - j0][i] = R[i][t];
            Matrix P(j1 - j0, r);
            product(j1 - j0, r, j0, Rt.data(), false, X.data(), P.data());
            for (i64 i = j0; i < j1; ++i)
                for (i64 c = 0; c < r; ++c)
                    X[i][c] -= P[i - j0][c];
        }
        for (i64 i = j0; i < j1; ++i) {
            const double inv = 1.0 / R[i][i];
            for (i64 c = 0; c < r; ++c)
                X[i][c] *= inv;
            const double *__restrict__ xi = X[i];
            for (i64 t = i + 1; t < j1; ++t) {
                const double f = R[i][t];
                double *__restrict__ xt = X[t];
                for (i64 c = 0; c < r; ++c)
                    xt[c] -= f * xi[c];
            }
        }
    }
    return X;
}

Matrix cholesky_solve(const Matrix &R, const Matrix &B) {
    Matrix X = forward_solve(R, B);
    const i64 k = B.rows, r = B.cols;
    if (k == 0)
        return X;
    for (i64 j0 = (k - 1) / PANEL * PANEL; j0 >= 0; j0 -= PANEL) {
        const i64 j1 = std::min(k, j0 + PANEL);
        if (j1 < k) {
            const Matrix Rp = part(R, j0, j1 - j0, j1, k - j1);
            Matrix P(j1 - j0, r);
            product(j1 - j0, r, k - j1, Rp.data(), false, X[j1], P.data());
            for (i64 i = j0; i < j1; ++i)
                for (i64 c = 0; c < r; ++c)
                    X[i][c] -= P[i - j0][c];
        }
        for (i64 i = j1 - 1; i >= j0; --i) {
            double *__restrict__ xi = X[i];
            for (i64 t = i + 1; t < j1; ++t) {
                const double f = R[i][t];
                const double *__restrict__ xt = X[t];
                for (i64 c = 0; c < r; ++c)
                    xi[c] -= f * xt[c];
            }
            const double inv = 1.0 / R[i][i];
            for (i64 c = 0; c < r; ++c)
                X[i][c] *= inv;
        }
    }
    return X;
}

Matrix independent_cholesky(const Matrix &H, double floor, std::vector<std::uint8_t> &kept) {
    const i64 k = H.rows;
    Matrix A = H;
    kept.assign(static_cast<std::size_t>(k), 0);
    for (i64 j0 = 0; j0 < k; j0 += PANEL) {
        const i64 j1 = std::min(k, j0 + PANEL);
        for (i64 j = j0; j < j1; ++j) {
            double *__restrict__ aj = A[j];
            for (i64 c = j0; c < j; ++c) {
                if (kept[c]) {
                    const double f = A[c][j];
                    const double *__restrict__ ac = A[c];
                    for (i64 t = j; t < j1; ++t)
                        aj[t] -= f * ac[t];
                }
            }
            const double d = A[j][j];
            if (d > floor) {
                kept[j] = 1;
                A[j][j] = std::sqrt(d);
                for (i64 t = j + 1; t < j1; ++t)
                    A[j][t] /= A[j][j];
            } else {
                for (i64 t = j0; t < j1; ++t)
                    A[j][t] = 0.0;
                for (i64 i = 0; i < j; ++i)
                    A[i][j] = 0.0;
            }
        }
        if (j1 < k) {
            // the panel's rows right of it: R11ᵀ R12 = A12; then A22 −= R12ᵀR12 on the upper part
            const i64 nb = j1 - j0, rest = k - j1;
            const Matrix Zt = inverse_upper_t(part(A, j0, nb, j0, nb), kept.data() + j0);
            const Matrix A12 = part(A, j0, nb, j1, rest);
            Matrix R12(nb, rest);
            product(nb, rest, nb, Zt.data(), false, A12.data(), R12.data());
            for (i64 i = 0; i < nb; ++i)
                std::copy(R12[i], R12[i] + rest, A[j0 + i] + j1);
            for (i64 b0 = 0; b0 < rest; b0 += 4 * PANEL) {
                const i64 b1 = std::min(rest, b0 + 4 * PANEL);
                Matrix Lt(b1 - b0, nb);  // R12[:, b0:b1]ᵀ
                for (i64 i = 0; i < nb; ++i)
                    for (i64 t = b0; t < b1; ++t)
                        Lt[t - b0][i] = R12[i][t];
                const Matrix Rr = part(R12, 0, nb, b0, rest - b0);
                Matrix P(b1 - b0, rest - b0);
                product(b1 - b0, rest - b0, nb, Lt.data(), false, Rr.data(), P.data());
                for (i64 i = 0; i < b1 - b0; ++i)
                    for (i64 t = 0; t < rest - b0; ++t)
                        A[j1 + b0 + i][j1 + b0 + t] -= P[i][t];
            }
        }
    }
    for (i64 i = 0; i < k; ++i)
        for (i64 t = 0; t < i; ++t)
            A[i][t] = 0.0;
    return A;
}

}  // namespace svmkit
