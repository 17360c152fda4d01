// Shared by every part of svmkit._core: array types, the SIMD clones, threads, BLAS, stop flags.
#pragma once

#include <cstdint>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

namespace svmkit {

using i64 = std::int64_t;

// C-ordered arrays in host memory, as NumPy hands them over (no copy).
template <class T> using Vec = nb::ndarray<T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T> using Mat = nb::ndarray<T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A hot loop compiled three times, for AVX-512, AVX2 and the baseline, the host's best chosen
// when the module loads (GNU ifunc): one portable binary, no -march.
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SVMKIT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef SVMKIT_CLONES
#define SVMKIT_CLONES
#endif

// Threads of the parallel loops started from the calling thread: its own limit when set
// (`set_num_threads`, which returns the limit before), else OpenMP's (OMP_NUM_THREADS, threadpoolctl's limit, the cores).
int threads();
int set_num_threads(int n);

// Whether another thread asked the loop to stop (a Ctrl-C): a flag it polls.
inline bool stopped(const std::uint8_t *flag) {
    return *static_cast<const volatile std::uint8_t *>(flag) != 0;
}

// The Fortran BLAS of SciPy (scipy.linalg.cython_blas), loaded with the module: the library
// NumPy's and SciPy's own products run on.
struct Blas {
    void (*dgemm)(const char *, const char *, const int *, const int *, const int *, const double *,
                  const double *, const int *, const double *, const int *, const double *, double *, const int *);
    void (*dgemv)(const char *, const int *, const int *, const double *, const double *, const int *,
                  const double *, const int *, const double *, double *, const int *);
    double (*ddot)(const int *, const double *, const int *, const double *, const int *);
    void (*dtrsm)(const char *, const char *, const char *, const char *, const int *, const int *,
                  const double *, const double *, const int *, double *, const int *);
    void (*dsyrk)(const char *, const char *, const int *, const int *, const double *, const double *,
                  const int *, const double *, double *, const int *);
    void (*sgemm)(const char *, const char *, const int *, const int *, const int *, const float *,
                  const float *, const int *, const float *, const int *, const float *, float *, const int *);
    void (*strsm)(const char *, const char *, const char *, const char *, const int *, const int *,
                  const float *, const float *, const int *, float *, const int *);
    void (*ssyrk)(const char *, const char *, const int *, const int *, const float *, const float *,
                  const int *, const float *, float *, const int *);
};
const Blas &blas();
void load_blas();

// C = alpha·op(A)·op(B) + beta·C for row-major matrices (C: m × n, the inner dimension k), in
// double or single precision.
void gemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, double alpha, const double *A, i64 lda,
          const double *B, i64 ldb, double beta, double *C, i64 ldc);
void gemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float *A, i64 lda, const float *B,
          i64 ldb, float beta, float *C, i64 ldc);

// A field of a plain struct T as `bind_struct` binds it: its Python name and its member;
// required by the constructor, or, made by `field(name, member, value)`, `value` when left out.
template <class T, class M> struct Field {
    using type = M;
    const char *name;
    M T::*member;
    nb::arg arg() const { return nb::arg(name); }
};
template <class T, class M> struct FieldOr : Field<T, M> {
    M value;
    nb::arg_v arg() const { return nb::arg(this->name) = value; }
};
template <class T, class M> Field<T, M> field(const char *name, M T::*member) { return {name, member}; }
template <class T, class M> FieldOr<T, M> field(const char *name, M T::*member, M value) {
    return {{name, member}, value};
}

// The plain struct T as a Python class: a constructor taking its fields by keyword (all of
// them, in their order in T), each field a read-write attribute.
template <class T, class... F> nb::class_<T> bind_struct(nb::module_ &m, const char *name, const char *doc,
                                                       const F &...fields) {
    nb::class_<T> c(m, name, doc);
    c.def("__init__", [](T *t, typename F::type... v) { new (t) T{v...}; }, fields.arg()...);
    (c.def_rw(fields.name, fields.member), ...);
    return c;
}

void register_threads(nb::module_ m);
void register_smo(nb::module_ m);
void register_kernels(nb::module_ m);
void register_linear(nb::module_ m);
void register_dense(nb::module_ m);
void register_ovo(nb::module_ m);
void register_shapley(nb::module_ m);

}  // namespace svmkit
