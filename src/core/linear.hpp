// LIBLINEAR's solvers: the row layouts their loops walk, the random order, the stopping settings.
#pragma once

#include "common.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace svmkit::linear {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr double inf = std::numeric_limits<double>::infinity();

// Python's max(a, b) and min(a, b): the first argument unless the second is strictly beyond it.
inline double py_max(double a, double b) { return b > a ? b : a; }
inline double py_min(double a, double b) { return b < a ? b : a; }

// A hint that p will be read soon (read, high locality); any address, even out of range, is harmless.
#if defined(__GNUC__)
#define LINEAR_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define LINEAR_PREFETCH(p) ((void)(p))
#endif

// The sparse rows' loops unrolled by 4 (GCC does not unroll by default): short rows (a9a's 14
// entries) spend less on the loop itself; the sums keep their order.
#if defined(__GNUC__) && !defined(__clang__)
#define LINEAR_UNROLL _Pragma("GCC unroll 4")
#else
#define LINEAR_UNROLL
#endif

// Inlined into every caller, whatever its size: the functions that only prefetch (GCC takes a
// function made of prefetches and loads for one without side effects and drops its calls,
// unless it is inlined first), and a pass's loop, which then runs within its caller's SIMD
// clone (SVMKIT_CLONES) rather than on the baseline instructions.
// LINEAR_INLINE_LAMBDA, after a lambda's parameters, does the same for a pass's body.
#if defined(__GNUC__)
#define LINEAR_INLINE inline __attribute__((always_inline))
#define LINEAR_INLINE_LAMBDA __attribute__((always_inline))
#else
#define LINEAR_INLINE inline
#define LINEAR_INLINE_LAMBDA
#endif

// Ask for every cache line of [begin, end): the hardware prefetcher, which would follow a row
// once it is read, starts too late for a row visited in a random order (asking for the first
// and last lines only leaves a visit waiting on the others).
template <class T> LINEAR_INLINE void ask_span(const T *begin, const T *end) {
    const char *p = reinterpret_cast<const char *>(begin), *q = reinterpret_cast<const char *>(end);
    for (; p < q; p += 64)
        LINEAR_PREFETCH(p);
    if (q > reinterpret_cast<const char *>(begin))
        LINEAR_PREFETCH(q - 1);
}

// When a solver stops: its tolerance, its passes at most, and the seed of its random order.
struct Stop {
    double tol;
    i64 max_iter;
    i64 seed;
    bool start;  // the dual solvers read their variables' output as the start (w then Σ its terms)
};

// LIBLINEAR's per-pass shuffle, drawn by xorshift64 with a multiply-shift range reduction.
struct Xorshift {
    u64 state;
    // A nonzero state from a seed.
    explicit Xorshift(i64 seed) : state(u64(seed) * 0x9E3779B97F4A7C15ull | 1ull) {}

    // A random permutation of the first `active` entries of index.
    template <class Index> void shuffle(Index *index, i64 active) {
        for (i64 s = 0; s < active; ++s) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            const i64 j = s + i64(((state >> 32) * u64(active - s)) >> 32);
            std::swap(index[s], index[j]);
        }
    }
};

// The variables of a coordinate descent with LIBLINEAR's shrinking: their order, the `active`
// ones first.
struct ActiveSet {
    std::vector<i64> index;
    i64 active;

    explicit ActiveSet(i64 n) : index(size_t(n)), active(n) { std::iota(index.begin(), index.end(), i64(0)); }

    bool all() const { return active == i64(index.size()); }
    void activate_all() { active = i64(index.size()); }

    // One pass over the active variables in a fresh random order: visit(i, s, active) for the
    // variable i at position s returns false to shrink it (it leaves the active set, and the last
    // active one takes its position, visited next).
    template <class Visit> LINEAR_INLINE void pass(Xorshift &random, Visit &&visit) {
        i64 *order = index.data();
        i64 n_active = active;
        random.shuffle(order, n_active);
        for (i64 s = 0; s < n_active;) {
            if (visit(order[s], s, n_active)) {
                ++s;
            } else {
                --n_active;
                std::swap(order[s], order[n_active]);
            }
        }
        active = n_active;
    }
};

// a / b, with C's ±∞ for b = 0 (LIBLINEAR's steps on a zero curvature are then clipped to
// their bounds).
inline double quotient(double a, double b) {
    if (b == 0.0)
        return a > 0.0 ? inf : (a < 0.0 ? -inf : 0.0);
    return a / b;
}

// One variable x with an L1 term λ|x| in its objective, from its gradient's two one-sided
// values gp = g + λ and gn = g − λ: its optimality violation (at 0, how far [gn, gp] is from
// holding 0; elsewhere |g ± λ| for the sign of x), and the Newton step d minimising
// g·d + ½h·d² + λ|x + d| (Yuan et al. 2010, JMLR 11, section 4.1.2).
inline double l1_violation(double gp, double gn, double x) {
    if (x == 0.0)
        return gp < 0.0 ? -gp : (gn > 0.0 ? gn : 0.0);
    return x > 0.0 ? std::fabs(gp) : std::fabs(gn);
}
inline double l1_step(double gp, double gn, double h, double x) {
    if (gp < h * x)
        return -quotient(gp, h);
    if (gn > h * x)
        return -quotient(gn, h);
    return -x;
}

// LIBLINEAR's stop for the solvers whose tolerance is relative (-s 5, 12, 13): the passes end
// when one's summed violation is at most tol times the first pass's and the pass saw every
// variable; a pass that meets the first condition only sends the next over every variable.
struct RelativeStop {
    double tol;
    double g_max_old = inf;  // the largest violation of the pass before: the shrinking threshold
    double g_norm_init = -1.0;
    double g_max = 0.0, g_norm = 0.0;  // the largest and the summed violation of this pass

    void add(double violation) {
        g_max = py_max(g_max, violation);
        g_norm += violation;
    }
    // After pass `it` (from 0): whether the passes end.
    bool done(i64 it, ActiveSet &variables) {
        const double pass_max = g_max, pass_norm = g_norm;
        g_max = g_norm = 0.0;
        if (it == 0)
            g_norm_init = pass_norm;
        if (pass_norm <= tol * g_norm_init) {
            if (variables.all())
                return true;
            variables.activate_all();
            g_max_old = inf;
            return false;
        }
        g_max_old = pass_max;
        return false;
    }
};

// The words of a compressed sparse matrix's messages: its pointers' name, what one pointer
// starts (a row or a column), what an index names, and what the indices count.
struct SparseWords {
    const char *pointers, *line, *index, *count;
};

// A compressed sparse matrix's pointers from 0, nondecreasing, within the stored indices; every
// index below `bound`. Throws std::invalid_argument naming the first fault.
template <class P, class I>
void check_compressed(const Vec<const P> &pointers, const Vec<const I> &indices, i64 bound, const SparseWords &words) {
    const std::string name = words.pointers;
    if (pointers.shape(0) < 1)
        throw std::invalid_argument(name + " is empty: it needs one pointer more than " + words.line + "s");
    const P *q = pointers.data();
    const i64 lines = i64(pointers.shape(0)) - 1;
    if (q[0] != 0)
        throw std::invalid_argument(name + " does not start at 0");
    for (i64 k = 0; k < lines; ++k)
        if (q[k + 1] < q[k])
            throw std::invalid_argument(name + " decreases at " + words.line + " " + std::to_string(k));
    if (u64(q[lines]) > u64(indices.shape(0)))
        throw std::invalid_argument(name + " points past the stored entries");
    const I *c = indices.data();
    for (u64 p = 0; p < u64(q[lines]); ++p)
        if (u64(c[p]) >= u64(bound))
            throw std::invalid_argument(std::string(words.index) + " " + std::to_string(c[p]) + " out of range for " +
                                        std::to_string(bound) + " " + words.count);
}

// The rows x̃_i = (x_i, bias) of X in one of three layouts, chosen when compiling (a run-time
// branch between layouts in every update slows every pass). Each gives
// wᵀx̃_i (`dot`), w += d·x̃_i (`axpy`), w += d·x̃_i² (`axpy_square`), the weight of the
// constant feature being w[n_features], and asks for row k's memory (`ask`) and its row
// pointer (`ask_pointer`).

// A C-ordered float64 array.
struct Dense {
    const double *x;
    i64 n_features;
    double bias;

    double dot(const double *w, i64 i) const {
        const double *r = x + i * n_features;
        double s = w[n_features] * bias;
        for (i64 j = 0; j < n_features; ++j)
            s += w[j] * r[j];
        return s;
    }
    void axpy(double d, double *w, i64 i) const {
        const double *r = x + i * n_features;
        w[n_features] += d * bias;
        for (i64 j = 0; j < n_features; ++j)
            w[j] += d * r[j];
    }
    void axpy_square(double d, double *w, i64 i) const {
        const double *r = x + i * n_features;
        w[n_features] += d * bias * bias;
        for (i64 j = 0; j < n_features; ++j)
            w[j] += d * r[j] * r[j];
    }
    LINEAR_INLINE void ask(i64 k) const { ask_span(x + k * n_features, x + (k + 1) * n_features); }
    LINEAR_INLINE void ask_pointer(i64) const {}
    // f(j, x̃_ij) for every entry of x̃_i, the constant feature's last.
    template <class F> void entries(i64 i, F &&f) const {
        const double *r = x + i * n_features;
        for (i64 j = 0; j < n_features; ++j)
            f(u64(j), r[j]);
        f(u64(n_features), bias);
    }
};

// CSR with values V (float32 when that holds them exactly: fewer bytes for a random-order pass
// to wait on) and column numbers I; with V = void, a pattern: every stored value is 1, and no
// values are read nor multiplied by.
template <class V, class I> struct Csr {
    const V *data;
    const I *indices;
    const u64 *indptr;
    i64 n_features;
    double bias;

    static constexpr bool pattern = std::is_void_v<V>;

    double value(u64 p) const {
        if constexpr (pattern)
            return 1.0;
        else
            return double(data[p]);
    }
    double dot(const double *w, i64 i) const {
        const u64 end = indptr[i + 1];
        double s = w[n_features] * bias;
        LINEAR_UNROLL
        for (u64 p = indptr[i]; p < end; ++p)
            s += pattern ? w[indices[p]] : w[indices[p]] * value(p);
        return s;
    }
    void axpy(double d, double *w, i64 i) const {
        const u64 end = indptr[i + 1];
        w[n_features] += d * bias;
        LINEAR_UNROLL
        for (u64 p = indptr[i]; p < end; ++p)
            w[indices[p]] += pattern ? d : d * value(p);
    }
    void axpy_square(double d, double *w, i64 i) const {
        const u64 end = indptr[i + 1];
        w[n_features] += d * bias * bias;
        LINEAR_UNROLL
        for (u64 p = indptr[i]; p < end; ++p)
            w[indices[p]] += pattern ? d : d * value(p) * value(p);
    }
    LINEAR_INLINE void ask(i64 k) const {
        const u64 first = indptr[k], end = indptr[k + 1];
        if constexpr (!pattern)
            ask_span(data + first, data + end);
        ask_span(indices + first, indices + end);
    }
    LINEAR_INLINE void ask_pointer(i64 k) const { LINEAR_PREFETCH(indptr + k); }
    // f(j, x̃_ij) for every stored entry of x̃_i, the constant feature's last.
    template <class F> void entries(i64 i, F &&f) const {
        for (u64 p = indptr[i]; p < indptr[i + 1]; ++p)
            f(u64(indices[p]), value(p));
        f(u64(n_features), bias);
    }
};

template <class I> using Pattern = Csr<void, I>;

using Layout = std::variant<Dense, Csr<double, u32>, Csr<float, u32>, Csr<double, u64>, Csr<float, u64>,
                            Pattern<u32>, Pattern<u64>>;

// X's rows in their layout, with the arrays they read kept alive.
struct Rows {
    Layout layout;
    i64 n_rows = 0;
    i64 n_features = 0;
    nb::ndarray<> parts[3];

    template <class F> decltype(auto) visit(F &&f) const { return std::visit(std::forward<F>(f), layout); }
};

// The per-row constants of the dual: ‖x_i‖², and by the row's group y_i (classification), U_i and D_ii.
struct RowTables {
    Vec<const double> norms;
    Vec<const std::int32_t> group;
    Vec<const double> upper, diag, sign;
};

void register_rows(nb::module_ m);
void register_dcd(nb::module_ m);
void register_newton(nb::module_ m);
void register_l1(nb::module_ m);
void register_crammer_singer(nb::module_ m);

}  // namespace svmkit::linear
