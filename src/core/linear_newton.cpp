// The products with X of the primal truncated Newton (LIBLINEAR -s 2 and -s 11), over the rows
// x̃_i = (x_i, bias) in the dual solver's layouts: a Hessian product visits each row once, its
// dot and its update together.
#include "linear.hpp"

#include <algorithm>
#include <utility>
#include <vector>
#include <stdexcept>
#include <string>

namespace svmkit::linear {

namespace {

template <class L> SVMKIT_CLONES void products(const L &rows, i64 n, const double *v, double *out) {
    const L x = rows;  // a local copy: the writes to out cannot change its bias or pointers
    for (i64 i = 0; i < n; ++i)
        out[i] = x.dot(v, i);
}

// out = Σ_k a_k x̃_{rows[k]} (x̃² when `square`), a_k = u_k, times x̃_{rows[k]}ᵀs when s is given.
template <class L>
SVMKIT_CLONES void sum(const L &layout, const i64 *rows, i64 m, const double *u, const double *s, bool square,
                       double *out) {
    const L x = layout;  // a local copy: the updates of out cannot change its bias or pointers
    for (i64 k = 0; k < m; ++k) {
        const i64 i = rows[k];
        double a = u[k];
        if (s != nullptr)
            a *= x.dot(s, i);
        if (square)
            x.axpy_square(a, out, i);
        else
            x.axpy(a, out, i);
    }
}

// out += Σ_k u_k x̃_{rows[k]} x̃_{rows[k]}ᵀ on and above the diagonal (out is n_weights²): each
// row's entries gathered once, then each entry's multiple of the row added along one row of out
// (the constant feature, last, has the largest index; a row whose columns are not increasing
// takes the slower order-free loop).
template <class L> SVMKIT_CLONES void outer(const L &x, const i64 *rows, i64 m, const double *u, double *out) {
    const u64 n_weights = u64(x.n_features) + 1;
    std::vector<u64> col;
    std::vector<double> val;
    for (i64 k = 0; k < m; ++k) {
        col.clear();
        val.clear();
        bool increasing = true;
        x.entries(rows[k], [&](u64 j, double v) {
            increasing = increasing && (col.empty() || j > col.back());
            col.push_back(j);
            val.push_back(v);
        });
        const size_t len = col.size();
        const u64 *c = col.data();
        const double *v = val.data();
        for (size_t a = 0; a < len; ++a) {
            const double va = u[k] * v[a];
            if (increasing) {
                double *o = out + c[a] * n_weights;
                for (size_t b = a; b < len; ++b)
                    o[c[b]] += va * v[b];
            } else {
                for (size_t b = a; b < len; ++b)
                    out[std::min(c[a], c[b]) * n_weights + std::max(c[a], c[b])] += va * v[b];
            }
        }
    }
}

void row_products(const Rows &rows, Vec<const double> v, Vec<double> out) {
    if (i64(v.shape(0)) != rows.n_features + 1)
        throw std::invalid_argument("v needs n_features + 1 entries");
    if (i64(out.shape(0)) != rows.n_rows)
        throw std::invalid_argument("out needs one entry per row");
    rows.visit([&](const auto &x) { products(x, rows.n_rows, v.data(), out.data()); });
}

void rows_sum(const Rows &rows, Vec<const i64> which, Vec<const double> u, Vec<const double> s, bool square,
              Vec<double> out) {
    const i64 m = i64(which.shape(0)), n_weights = rows.n_features + 1;
    if (i64(u.shape(0)) != m)
        throw std::invalid_argument("u needs one entry per listed row");
    if (s.shape(0) != 0 && i64(s.shape(0)) != n_weights)
        throw std::invalid_argument("s needs n_features + 1 entries (or none)");
    if (i64(out.shape(0)) != n_weights)
        throw std::invalid_argument("out needs n_features + 1 entries");
    const i64 *r = which.data();
    for (i64 k = 0; k < m; ++k)
        if (r[k] < 0 || r[k] >= rows.n_rows)
            throw std::invalid_argument("row " + std::to_string(r[k]) + " out of range");
    std::fill(out.data(), out.data() + n_weights, 0.0);
    const double *sp = s.shape(0) != 0 ? s.data() : nullptr;
    rows.visit([&](const auto &x) { sum(x, r, m, u.data(), sp, square, out.data()); });
}

void rows_outer(const Rows &rows, Vec<const i64> which, Vec<const double> u, Mat<double> out) {
    const i64 m = i64(which.shape(0)), n_weights = rows.n_features + 1;
    if (i64(u.shape(0)) != m)
        throw std::invalid_argument("u needs one entry per listed row");
    if (i64(out.shape(0)) != n_weights || i64(out.shape(1)) != n_weights)
        throw std::invalid_argument("out needs n_features + 1 rows and columns");
    const i64 *r = which.data();
    for (i64 k = 0; k < m; ++k)
        if (r[k] < 0 || r[k] >= rows.n_rows)
            throw std::invalid_argument("row " + std::to_string(r[k]) + " out of range");
    double *o = out.data();
    std::fill(o, o + n_weights * n_weights, 0.0);
    rows.visit([&](const auto &x) { outer(x, r, m, u.data(), o); });
    for (i64 j = 0; j < n_weights; ++j)
        for (i64 l = j + 1; l < n_weights; ++l)
            o[l * n_weights + j] = o[j * n_weights + l];
}

}  // namespace

void register_newton(nb::module_ m) {
    m.def("row_products", &row_products, nb::arg("rows"), nb::arg("v"), nb::arg("out"),
          nb::call_guard<nb::gil_scoped_release>(), "out_i = x̃_iᵀv for every row.");
    m.def("rows_sum", &rows_sum, nb::arg("rows"), nb::arg("which"), nb::arg("u"), nb::arg("s"), nb::arg("square"),
          nb::arg("out"), nb::call_guard<nb::gil_scoped_release>(),
          "out = Σ_k a_k x̃_{which[k]} (x̃² when `square`), a_k = u_k, times x̃_{which[k]}ᵀs when s is not "
          "empty: Xᵀu, the diagonal Σ u_k x̃², or the Hessian's X_Iᵀ diag(u) X_I s in one visit.");
    m.def("rows_outer", &rows_outer, nb::arg("rows"), nb::arg("which"), nb::arg("u"), nb::arg("out"),
          nb::call_guard<nb::gil_scoped_release>(),
          "out = Σ_k u_k x̃_{which[k]} x̃_{which[k]}ᵀ (n_features + 1 square, C order): the Hessian's "
          "X_Iᵀ diag(u) X_I as a matrix.");
}

}  // namespace svmkit::linear
