// Threads and BLAS of the core.
#include "common.hpp"

#include <Python.h>
#include <stdexcept>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace svmkit {

namespace {
thread_local int own_limit = 0;
Blas loaded{};

template <class F> void take(nb::handle capi, const char *name, F &target) {
    PyObject *capsule = PyDict_GetItemString(capi.ptr(), name);
    if (capsule == nullptr)
        throw std::runtime_error(std::string("scipy.linalg.cython_blas has no ") + name);
    void *p = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
    if (p == nullptr)
        throw nb::python_error();
    target = reinterpret_cast<F>(p);
}

const char *simd_path() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return "avx512f";
    if (__builtin_cpu_supports("avx2"))
        return "avx2";
#endif
    return "default";
}
}  // namespace

int threads() {
    if (own_limit > 0)
        return own_limit;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int set_num_threads(int n) {
    const int previous = own_limit;
    own_limit = n > 0 ? n : 0;
    return previous;
}

void load_blas() {
    nb::object capi = nb::module_::import_("scipy.linalg.cython_blas").attr("__pyx_capi__");
    take(capi, "dgemm", loaded.dgemm);
    take(capi, "dgemv", loaded.dgemv);
    take(capi, "ddot", loaded.ddot);
    take(capi, "dtrsm", loaded.dtrsm);
    take(capi, "dsyrk", loaded.dsyrk);
    take(capi, "sgemm", loaded.sgemm);
    take(capi, "strsm", loaded.strsm);
    take(capi, "ssyrk", loaded.ssyrk);
}

const Blas &blas() { return loaded; }

namespace {

template <class T, class Routine>
void row_major_gemm(Routine routine, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, T alpha, const T *A, i64 lda,
                    const T *B, i64 ldb, T beta, T *C, i64 ldc) {
    if (m == 0 || n == 0)
        return;
    // row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ
    const char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
    const int M = int(n), N = int(m), K = int(k), LA = int(ldb), LB = int(lda), LC = int(ldc);
    if (K == 0) {
        for (i64 i = 0; i < m; ++i)
            for (i64 j = 0; j < n; ++j)
                C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
        return;
    }
    routine(&ta, &tb, &M, &N, &K, &alpha, B, &LA, A, &LB, &beta, C, &LC);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, double alpha, const double *A, i64 lda,
          const double *B, i64 ldb, double beta, double *C, i64 ldc) {
    row_major_gemm(loaded.dgemm, trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float *A, i64 lda, const float *B,
          i64 ldb, float beta, float *C, i64 ldc) {
    row_major_gemm(loaded.sgemm, trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void register_threads(nb::module_ m) {
    m.def("get_num_threads", &threads,
          "Threads of the core's parallel loops started from the calling thread.");
    m.def("set_num_threads", &set_num_threads, nb::arg("n"),
          "Limit the calling thread's parallel loops to n threads (0: OpenMP's own number); "
          "returns its limit before (0: none).");
    m.def("simd", &simd_path, "The instruction set of the hot loops' clones this host runs.");
    m.attr("openmp") = nb::bool_(
#ifdef _OPENMP
        true
#else
        false
#endif
    );
}

}  // namespace svmkit
