// The sequential dual method for Crammer and Singer's multi-class linear SVM (LIBLINEAR -s 4):
//
//     min_α ½ Σ_m ‖w_m‖² + Σ_i Σ_m e_i^m α_i^m,   w_m = Σ_i α_i^m x_i,
//     s.t. α_i^m ≤ C_i^m, Σ_m α_i^m = 0 for every i,
//
// e_i^m = 0 and C_i^m = C_i when m = y_i, else e_i^m = 1 and C_i^m = 0: the dual of
// min ½ Σ_m ‖w_m‖² + Σ_i C_i max_m (e_i^m + w_mᵀx_i − w_{y_i}ᵀx_i) (Crammer & Singer 2001, JMLR
// 2; Keerthi, Sundararajan, Chang, Hsieh & Lin 2008, KDD, "A sequential dual method for large
// scale multi-class linear SVMs"; Fan et al. 2008, JMLR 9, appendix). One row's k variables at a
// time in a random order, each sub-problem solved exactly by sorting; variables at their bound
// with a gradient below the row's smallest free one are shrunk, and the iteration stops when the
// largest gradient spread of a pass is below `tol` after a pass over every variable. The rules
// and constants are LIBLINEAR 2.50's (linear.cpp, Solver_MCSVM_CS).
#include "linear.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace svmkit::linear {

namespace {

// A row whose gradient spread is at most this is left as it is (LIBLINEAR's 1e-12).
constexpr double SPREAD_MIN = 1e-12;

// The row's k-variable problem in closed form: α^m = min(C^m, (β − B_m)/A), with β found from
// the values D = B (+ A·C at y_i) sorted in decreasing order.
void sub_problem(double A, i64 yi, double c_yi, i64 active, const double *B, double *D, double *alpha_new) {
    for (i64 m = 0; m < active; ++m)
        D[m] = B[m];
    if (yi < active)
        D[yi] += A * c_yi;
    for (i64 m = 1; m < active; ++m) {  // insertion sort, decreasing: k is small
        const double v = D[m];
        i64 r = m - 1;
        while (r >= 0 && D[r] < v) {
            D[r + 1] = D[r];
            --r;
        }
        D[r + 1] = v;
    }
    double beta = D[0] - A * c_yi;
    i64 r = 1;
    while (r < active && beta < double(r) * D[r]) {
        beta += D[r];
        ++r;
    }
    beta /= double(r);
    for (i64 m = 0; m < active; ++m) {
        const double bound = m == yi ? c_yi : 0.0;
        alpha_new[m] = py_min(bound, (beta - B[m]) / A);
    }
}

inline bool shrinkable(double alpha, double bound, double G, double min_g) { return alpha == bound && G < min_g; }

// The rows of [X, bias·1]: values at columns[p] for p in pointers[i] … pointers[i + 1].
struct Sparse {
    const double *values;
    const i64 *columns;
    const i64 *pointers;
};

// W: n_weights × k, a feature's k weights side by side, as a row updates them; α: n × k.
// Without SVMKIT_CLONES: its clones are no faster (slower on digits).
i64 solve(const Sparse &X, const i64 *y, const double *c, i64 n, const Stop &stop, double *w, i64 k,
          double *alpha) {
    const double *values = X.values;
    const i64 *columns = X.columns, *pointers = X.pointers;
    Xorshift random(stop.seed);
    std::vector<i64> order(size_t(n * k));  // per row: its active classes first
    for (i64 i = 0; i < n; ++i)
        for (i64 m = 0; m < k; ++m)
            order[i * k + m] = m;
    std::vector<double> sq_norm(size_t(n), 0.0);
    for (i64 i = 0; i < n; ++i)
        for (i64 p = pointers[i]; p < pointers[i + 1]; ++p)
            sq_norm[i] += values[p] * values[p];
    std::vector<i64> row_active(size_t(n), k);
    std::vector<i64> y_pos(y, y + n);  // position of y_i among row i's classes
    std::vector<i64> index(static_cast<size_t>(n));
    for (i64 i = 0; i < n; ++i)
        index[i] = i;
    const size_t width = static_cast<size_t>(k);
    std::vector<double> G(width), B(width), D(width), alpha_new(width), d_val(width);
    std::vector<i64> d_ind(width);
    i64 active = n;
    double eps_shrink = py_max(10.0 * stop.tol, 1.0);
    bool start_from_all = true;
    i64 it = 0;
    while (it < stop.max_iter) {
        double stopping = -inf;
        random.shuffle(index.data(), active);
        i64 s = 0;
        while (s < active) {
            const i64 i = index[s];
            const double A = sq_norm[i];
            ++s;
            if (A <= 0.0)
                continue;
            i64 *ord = order.data() + i * k;
            double *a = alpha + i * k;
            i64 ka = row_active[i];
            for (i64 m = 0; m < ka; ++m)
                G[m] = 1.0;
            if (y_pos[i] < ka)
                G[y_pos[i]] = 0.0;
            for (i64 p = pointers[i]; p < pointers[i + 1]; ++p) {
                const double *wf = w + columns[p] * k;
                const double v = values[p];
                for (i64 m = 0; m < ka; ++m)
                    G[m] += wf[ord[m]] * v;
            }
            double min_g = inf, max_g = -inf;
            for (i64 m = 0; m < ka; ++m) {
                if (a[ord[m]] < 0.0 && G[m] < min_g)
                    min_g = G[m];
                if (G[m] > max_g)
                    max_g = G[m];
            }
            if (y_pos[i] < ka && a[y[i]] < c[i] && G[y_pos[i]] < min_g)
                min_g = G[y_pos[i]];
            for (i64 m = 0; m < ka; ++m) {
                const double bound = m == y_pos[i] ? c[i] : 0.0;
                if (shrinkable(a[ord[m]], bound, G[m], min_g)) {
                    --ka;
                    while (ka > m) {
                        const double bound_last = ka == y_pos[i] ? c[i] : 0.0;
                        if (!shrinkable(a[ord[ka]], bound_last, G[ka], min_g)) {
                            std::swap(ord[m], ord[ka]);
                            std::swap(G[m], G[ka]);
                            if (y_pos[i] == ka)
                                y_pos[i] = m;
                            else if (y_pos[i] == m)
                                y_pos[i] = ka;
                            break;
                        }
                        --ka;
                    }
                }
            }
            row_active[i] = ka;
            if (ka <= 1) {
                --s;
                --active;
                std::swap(index[s], index[active]);
                continue;
            }
            if (max_g - min_g <= SPREAD_MIN)
                continue;
            stopping = py_max(stopping, max_g - min_g);
            for (i64 m = 0; m < ka; ++m)
                B[m] = G[m] - A * a[ord[m]];
            sub_problem(A, y_pos[i], c[i], ka, B.data(), D.data(), alpha_new.data());
            i64 nz = 0;
            for (i64 m = 0; m < ka; ++m) {
                const i64 cls = ord[m];
                const double d = alpha_new[m] - a[cls];
                a[cls] = alpha_new[m];
                if (std::fabs(d) >= SPREAD_MIN) {
                    d_ind[nz] = cls;
                    d_val[nz] = d;
                    ++nz;
                }
            }
            for (i64 p = pointers[i]; p < pointers[i + 1]; ++p) {
                double *wf = w + columns[p] * k;
                const double v = values[p];
                for (i64 m = 0; m < nz; ++m)
                    wf[d_ind[m]] += d_val[m] * v;
            }
        }
        ++it;
        if (stopping < eps_shrink) {
            if (stopping < stop.tol && start_from_all)
                break;
            active = n;
            std::fill(row_active.begin(), row_active.end(), k);
            eps_shrink = py_max(eps_shrink / 2, stop.tol);
            start_from_all = true;
        } else {
            start_from_all = false;
        }
    }
    return it;
}

i64 crammer_singer(Vec<const double> values, Vec<const i64> columns, Vec<const i64> pointers, Vec<const i64> y,
                   Vec<const double> c, const Stop &stop, Mat<double> W, Mat<double> alpha) {
    const i64 n = i64(c.shape(0)), n_weights = i64(W.shape(0)), k = i64(W.shape(1));
    if (i64(y.shape(0)) != n || i64(alpha.shape(0)) != n || i64(alpha.shape(1)) != k)
        throw std::invalid_argument("y, c and alpha need one row per sample, alpha and W one column per class");
    if (i64(pointers.shape(0)) != n + 1)
        throw std::invalid_argument("pointers needs one entry per row plus one");
    if (values.shape(0) != columns.shape(0))
        throw std::invalid_argument("values and columns differ in length");
    check_compressed(pointers, columns, n_weights, {"pointers", "row", "column", "weights"});
    for (i64 i = 0; i < n; ++i)
        if (y.data()[i] < 0 || y.data()[i] >= k)
            throw std::invalid_argument("class " + std::to_string(y.data()[i]) + " out of range for " +
                                        std::to_string(k) + " classes");
    std::fill(W.data(), W.data() + n_weights * k, 0.0);
    std::fill(alpha.data(), alpha.data() + n * k, 0.0);
    return solve(Sparse{values.data(), columns.data(), pointers.data()}, y.data(), c.data(), n, stop, W.data(), k,
                 alpha.data());
}

}  // namespace

void register_crammer_singer(nb::module_ m) {
    m.def("crammer_singer", &crammer_singer, nb::arg("values"), nb::arg("columns"), nb::arg("pointers"),
          nb::arg("y"), nb::arg("c"), nb::arg("stop"), nb::arg("W"), nb::arg("alpha"),
          nb::call_guard<nb::gil_scoped_release>(),
          "Solve Crammer and Singer's multi-class dual (LIBLINEAR -s 4) by its sequential dual method over the "
          "CSR rows (values, columns, pointers) for classes y in 0 … k − 1 and costs c; writes W (one row of k "
          "weights per column) and α (n × k), returns the passes. Stops when a pass's largest gradient spread "
          "is below tol after a pass over every variable.");
}

}  // namespace svmkit::linear
