// The products with X of the primal truncated Newton (LIBLINEAR -s 2 and -s 11), over the rows
// x̃_i = (x_i, bias) in the dual solver's layouts: a Hessian product visits each row once, its
// dot and its update together.
#include "linear.hpp"

#include <algorithm>
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

}  // namespace

void register_newton(nb::module_ m) {
    m.def("row_products", &row_products, nb::arg("rows"), nb::arg("v"), nb::arg("out"),
          nb::call_guard<nb::gil_scoped_release>(), "out_i = x̃_iᵀv for every row.");
    m.def("rows_sum", &rows_sum, nb::arg("rows"), nb::arg("which"), nb::arg("u"), nb::arg("s"), nb::arg("square"),
          nb::arg("out"), nb::call_guard<nb::gil_scoped_release>(),
          "out = Σ_k a_k x̃_{which[k]} (x̃² when `square`), a_k = u_k, times x̃_{which[k]}ᵀs when s is not "
          "empty: Xᵀu, the diagonal Σ u_k x̃², or the Hessian's X_Iᵀ diag(u) X_I s in one visit.");
}

}  // namespace svmkit::linear
