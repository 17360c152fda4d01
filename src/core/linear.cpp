// svmkit._core.linear: the row layouts and settings shared by LIBLINEAR's solvers, and their registration.
#include "linear.hpp"

#include <stdexcept>
#include <string>

namespace svmkit {
namespace linear {

namespace {

// CSR arrays from 0 whose every column is below n_features.
template <class I> void check_csr(const Vec<const u64> &indptr, const Vec<const I> &indices, i64 n_features) {
    if (n_features < 0)
        throw std::invalid_argument("n_features is negative");
    check_compressed(indptr, indices, n_features, {"indptr", "row", "column", "features"});
}

Rows dense_rows(Mat<const double> x, double bias) {
    Rows rows;
    rows.layout = Dense{x.data(), i64(x.shape(1)), bias};
    rows.n_rows = i64(x.shape(0));
    rows.n_features = i64(x.shape(1));
    rows.parts[0] = nb::ndarray<>(x);
    return rows;
}

template <class V, class I>
Rows csr_rows(Vec<const V> data, Vec<const I> indices, Vec<const u64> indptr, i64 n_features, double bias) {
    check_csr(indptr, indices, n_features);
    if (data.shape(0) != indices.shape(0))
        throw std::invalid_argument("data and indices differ in length");
    Rows rows;
    rows.layout = Csr<V, I>{data.data(), indices.data(), indptr.data(), n_features, bias};
    rows.n_rows = i64(indptr.shape(0)) - 1;
    rows.n_features = n_features;
    rows.parts[0] = nb::ndarray<>(data);
    rows.parts[1] = nb::ndarray<>(indices);
    rows.parts[2] = nb::ndarray<>(indptr);
    return rows;
}

template <class I> Rows pattern_rows(Vec<const I> indices, Vec<const u64> indptr, i64 n_features, double bias) {
    check_csr(indptr, indices, n_features);
    Rows rows;
    rows.layout = Pattern<I>{nullptr, indices.data(), indptr.data(), n_features, bias};
    rows.n_rows = i64(indptr.shape(0)) - 1;
    rows.n_features = n_features;
    rows.parts[1] = nb::ndarray<>(indices);
    rows.parts[2] = nb::ndarray<>(indptr);
    return rows;
}

template <class V, class I> void def_csr(nb::module_ &m) {
    m.def("csr_rows", &csr_rows<V, I>, nb::arg("data"), nb::arg("indices"), nb::arg("indptr"), nb::arg("n_features"),
          nb::arg("bias"), nb::call_guard<nb::gil_scoped_release>(),
          "The rows (x_i, bias) of a CSR matrix (its arrays kept, not copied; indptr from 0).");
}

template <class I> void def_pattern(nb::module_ &m) {
    m.def("pattern_rows", &pattern_rows<I>, nb::arg("indices"), nb::arg("indptr"), nb::arg("n_features"),
          nb::arg("bias"), nb::call_guard<nb::gil_scoped_release>(),
          "The rows (x_i, bias) of a CSR matrix whose every stored value is 1, from its pattern alone.");
}

}  // namespace

void register_rows(nb::module_ m) {
    bind_struct<Stop>(m, "Stop",
                      "When a solver stops: its tolerance, its passes at most, the seed of its random order; and "
                      "whether the dual coordinate descent starts from the variables it is handed (a warm start).",
                      field("tol", &Stop::tol), field("max_iter", &Stop::max_iter), field("seed", &Stop::seed, i64(0)),
                      field("start", &Stop::start, false));

    nb::class_<RowTables>(m, "RowTables",
                          "The dual's per-row constants: ‖x_i‖² (norms), and by the row's group (group[i]) "
                          "U_i (upper), D_ii (diag) and, classifying, y_i (sign; empty for regression). Rows "
                          "with equal constants share a group, as LIBLINEAR indexes its bounds by class: a "
                          "random-order pass then finds them in one cache line.")
        .def(nb::init<Vec<const double>, Vec<const std::int32_t>, Vec<const double>, Vec<const double>,
                      Vec<const double>>(),
             nb::arg("norms"), nb::arg("group"), nb::arg("upper"), nb::arg("diag"), nb::arg("sign"));

    nb::class_<Rows>(m, "Rows", "X's rows with a constant feature, in the layout the solvers' loops walk.")
        .def_ro("n_rows", &Rows::n_rows)
        .def_ro("n_features", &Rows::n_features);

    m.def("dense_rows", &dense_rows, nb::arg("x"), nb::arg("bias"), nb::call_guard<nb::gil_scoped_release>(),
          "The rows (x_i, bias) of a C-ordered float64 array (kept, not copied).");
    def_csr<double, u32>(m);
    def_csr<float, u32>(m);
    def_csr<double, u64>(m);
    def_csr<float, u64>(m);
    def_pattern<u32>(m);
    def_pattern<u64>(m);
}

}  // namespace linear

void register_linear(nb::module_ m) {
    linear::register_rows(m);
    linear::register_dcd(m);
    linear::register_newton(m);
    linear::register_l1(m);
    linear::register_crammer_singer(m);
}

}  // namespace svmkit
