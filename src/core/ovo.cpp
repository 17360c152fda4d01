// One-vs-one prediction with many classes (LIBSVM's svm_predict_values): every class pair's
// decision value from a block of kernel values against the support vectors, without the
// n_SV × pairs weight matrix, either written out or folded at once into votes and confidences;
// and the class probabilities coupled from the pairs' (LIBSVM's multiclass_probability).
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace svmkit {

namespace {

// Test rows per tile: a support vector's values for them are 256 contiguous bytes, the width
// the pair loops run over.
constexpr i64 TILE_ROWS = 32;
// Classes per side of a tile of class pairs: their support vectors' values, votes and
// confidences (about 64 KB with two support vectors per class) stay in cache through the tile.
constexpr i64 TILE_CLASSES = 64;

struct PairCoefficients {
    const double *coef;  // (n_classes − 1) × n_sv, LIBSVM's sv_coef
    const i64 *start;    // class c's support vectors are start[c] .. start[c + 1] − 1
    const double *rho;   // per pair
    i64 n_classes, n_sv;
};

// d[r] = 0 + Σ_{s∈a} coef[b−1, s] K(x_r, s) + Σ_{s∈b} coef[a, s] K(x_r, s) − rho_k, LIBSVM's order
// of sums; Kt holds the tile's kernel values by support vector, TILE_ROWS per vector.
SVMKIT_CLONES void pair_values(const PairCoefficients &p, const double *Kt, i64 a, i64 b, double rho, double *d) {
    for (i64 r = 0; r < TILE_ROWS; ++r)
        d[r] = 0.0;
    const double *ca = p.coef + (b - 1) * p.n_sv, *cb = p.coef + a * p.n_sv;
    for (i64 s = p.start[a]; s < p.start[a + 1]; ++s) {
        const double c = ca[s], *k = Kt + s * TILE_ROWS;
        for (i64 r = 0; r < TILE_ROWS; ++r)
            d[r] += c * k[r];
    }
    for (i64 s = p.start[b]; s < p.start[b + 1]; ++s) {
        const double c = cb[s], *k = Kt + s * TILE_ROWS;
        for (i64 r = 0; r < TILE_ROWS; ++r)
            d[r] += c * k[r];
    }
    for (i64 r = 0; r < TILE_ROWS; ++r)
        d[r] -= rho;
}

// Pair (a, b) votes a when its value is > 0, b otherwise; its value adds to a's confidence and
// is taken from b's, in pair order as LIBSVM's and scikit-learn's loops sum them.
SVMKIT_CLONES void add_vote(const double *d, double *votes_a, double *votes_b, double *conf_a, double *conf_b) {
    for (i64 r = 0; r < TILE_ROWS; ++r) {
        const double win = d[r] > 0 ? 1.0 : 0.0;
        votes_a[r] += win;
        votes_b[r] += 1.0 - win;
        conf_a[r] += d[r];
        conf_b[r] -= d[r];
    }
}

// Calls visit(a, b, k, d) with the values d of every pair (a, b), k its index in LIBSVM's
// order, for one tile of rows. The tiles of pairs run so that each class's pairs still come in
// pair order: (x, c) for every x < c, then (c, y) for every y > c.
template <class Visit> void each_pair(const PairCoefficients &p, const double *Kt, Visit visit) {
    const i64 n = p.n_classes;
    double d[TILE_ROWS];
    for (i64 a0 = 0; a0 < n; a0 += TILE_CLASSES)
        for (i64 b0 = a0; b0 < n; b0 += TILE_CLASSES)
            for (i64 a = a0; a < std::min(a0 + TILE_CLASSES, n); ++a) {
                const i64 first = a * (n - 1) - a * (a - 1) / 2 - a - 1;  // pair (a, b) is first + b
                for (i64 b = std::max(b0, a + 1); b < std::min(b0 + TILE_CLASSES, n); ++b) {
                    pair_values(p, Kt, a, b, p.rho[first + b], d);
                    visit(a, b, first + b, d);
                }
            }
}

// Runs tile(lo, rows, Kt) over tiles of K's rows on the threads, Kt the tile's values by
// support vector (rows past the end zero).
template <class Tile> void each_row_tile(Mat<const double> K, i64 n_sv, Tile tile) {
    const i64 n = i64(K.shape(0)), tiles = (n + TILE_ROWS - 1) / TILE_ROWS;
    const double *k = K.data();
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> Kt(std::max<i64>(n_sv, 1) * TILE_ROWS);
#pragma omp for schedule(dynamic)
        for (i64 t = 0; t < tiles; ++t) {
            const i64 lo = t * TILE_ROWS, rows = std::min(TILE_ROWS, n - lo);
            std::fill(Kt.begin(), Kt.end(), 0.0);
            for (i64 r = 0; r < rows; ++r)
                for (i64 s = 0; s < n_sv; ++s)
                    Kt[s * TILE_ROWS + r] = k[(lo + r) * n_sv + s];
            tile(lo, rows, Kt.data());
        }
    }
}

PairCoefficients check(Mat<const double> K, Mat<const double> coef, Vec<const i64> start, Vec<const double> rho) {
    const i64 n_classes = i64(start.shape(0)) - 1, n_sv = i64(K.shape(1));
    if (n_classes < 2)
        throw std::invalid_argument("start must hold at least two classes");
    if (i64(coef.shape(0)) != n_classes - 1 || i64(coef.shape(1)) != n_sv)
        throw std::invalid_argument("coef must be (n_classes − 1) × K's columns");
    if (i64(rho.shape(0)) != n_classes * (n_classes - 1) / 2)
        throw std::invalid_argument("rho must hold one value per class pair");
    if (start(0) != 0 || start(n_classes) != n_sv)
        throw std::invalid_argument("start must run from 0 to K's columns");
    for (i64 c = 0; c < n_classes; ++c)
        if (start(c + 1) < start(c))
            throw std::invalid_argument("start must not decrease");
    return {coef.data(), start.data(), rho.data(), n_classes, n_sv};
}

void decisions(Mat<const double> K, Mat<const double> coef, Vec<const i64> start, Vec<const double> rho,
               Mat<double> out) {
    const PairCoefficients p = check(K, coef, start, rho);
    const i64 pairs = i64(rho.shape(0));
    if (i64(out.shape(0)) != i64(K.shape(0)) || i64(out.shape(1)) != pairs)
        throw std::invalid_argument("out must be K's rows × the class pairs");
    double *o = out.data();
    each_row_tile(K, p.n_sv, [&](i64 lo, i64 rows, const double *Kt) {
        each_pair(p, Kt, [&](i64, i64, i64 k, const double *d) {
            for (i64 r = 0; r < rows; ++r)
                o[(lo + r) * pairs + k] = d[r];
        });
    });
}

void votes(Mat<const double> K, Mat<const double> coef, Vec<const i64> start, Vec<const double> rho,
           Mat<double> out) {
    const PairCoefficients p = check(K, coef, start, rho);
    const i64 n = p.n_classes;
    if (i64(out.shape(0)) != i64(K.shape(0)) || i64(out.shape(1)) != 2 * n)
        throw std::invalid_argument("out must be K's rows × twice the classes");
    double *o = out.data();
    each_row_tile(K, p.n_sv, [&](i64 lo, i64 rows, const double *Kt) {
        std::vector<double> v(n * TILE_ROWS, 0.0), c(n * TILE_ROWS, 0.0);
        each_pair(p, Kt, [&](i64 a, i64 b, i64, const double *d) {
            add_vote(d, v.data() + a * TILE_ROWS, v.data() + b * TILE_ROWS, c.data() + a * TILE_ROWS,
                     c.data() + b * TILE_ROWS);
        });
        for (i64 r = 0; r < rows; ++r)
            for (i64 cl = 0; cl < n; ++cl) {
                o[(lo + r) * 2 * n + cl] = v[cl * TILE_ROWS + r];
                o[(lo + r) * 2 * n + n + cl] = c[cl * TILE_ROWS + r];
            }
    });
}

using Cube = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

// p from the pairwise probabilities r (k × k) of one row: Wu, Lin & Weng's (2004) method 2,
// min ½ pᵀQp with Σp = 1, by LIBSVM's fixed-point iteration and in its order of sums.
void couple_row(const double *r, i64 k, double *Q, double *Qp, double *p) {
    for (i64 t = 0; t < k; ++t) {
        p[t] = 1.0 / double(k);
        double qtt = 0.0;
        for (i64 j = 0; j < t; ++j) {
            qtt += r[j * k + t] * r[j * k + t];
            Q[t * k + j] = Q[j * k + t];
        }
        for (i64 j = t + 1; j < k; ++j) {
            qtt += r[j * k + t] * r[j * k + t];
            Q[t * k + j] = -r[j * k + t] * r[t * k + j];
        }
        Q[t * k + t] = qtt;
    }
    const double eps = 0.005 / double(k);
    for (i64 iter = 0, max_iter = std::max<i64>(100, k); iter < max_iter; ++iter) {
        // the stopping test on Qp and pQp recomputed, for accuracy
        double pQp = 0.0, max_error = 0.0;
        for (i64 t = 0; t < k; ++t) {
            double s = 0.0;
            for (i64 j = 0; j < k; ++j)
                s += Q[t * k + j] * p[j];
            Qp[t] = s;
            pQp += p[t] * s;
        }
        for (i64 t = 0; t < k; ++t)
            max_error = std::max(max_error, std::fabs(Qp[t] - pQp));
        if (max_error < eps)
            break;
        for (i64 t = 0; t < k; ++t) {
            const double diff = (-Qp[t] + pQp) / Q[t * k + t];
            p[t] += diff;
            pQp = (pQp + diff * (diff * Q[t * k + t] + 2 * Qp[t])) / (1 + diff) / (1 + diff);
            for (i64 j = 0; j < k; ++j) {
                Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1 + diff);
                p[j] /= (1 + diff);
            }
        }
    }
}

void couple(Cube r, Mat<double> out) {
    const i64 n = i64(r.shape(0)), k = i64(r.shape(1));
    if (i64(r.shape(2)) != k)
        throw std::invalid_argument("r must be n × k × k");
    if (i64(out.shape(0)) != n || i64(out.shape(1)) != k)
        throw std::invalid_argument("out must be n × k");
    const double *rr = r.data();
    double *o = out.data();
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> Q(k * k), Qp(k);
#pragma omp for schedule(dynamic)
        for (i64 i = 0; i < n; ++i)
            couple_row(rr + i * k * k, k, Q.data(), Qp.data(), o + i * k);
    }
}

}  // namespace

void register_ovo(nb::module_ m) {
    auto array = [](const char *name) { return nb::arg(name).noconvert(); };
    const auto release = nb::call_guard<nb::gil_scoped_release>();
    m.def("decisions", &decisions, array("K"), array("coef"), array("start"), array("rho"), array("out"), release,
          "decisions(K, coef, start, rho, out): out[r, k] = Σ_{s∈a} coef[b−1, s] K[r, s] + Σ_{s∈b} coef[a, s] K[r, s] "
          "− rho[k] for every class pair k = (a, b) in LIBSVM's order, K the kernel values of the rows against the "
          "support vectors (class c's: columns start[c] .. start[c+1] − 1), coef LIBSVM's sv_coef. Threads take "
          "tiles of 32 rows in turn.");
    m.def("votes", &votes, array("K"), array("coef"), array("start"), array("rho"), array("out"), release,
          "votes(K, coef, start, rho, out): as `decisions`, each pair's value folded at once into out[r, :n_classes], "
          "the votes (pair (a, b) votes a when its value is > 0, else b), and out[r, n_classes:], the confidences "
          "(the value added to a's, taken from b's, in pair order).");
    m.def("couple", &couple, array("r"), array("out"), release,
          "couple(r, out): out[i] = the class probabilities p of row i from its pairwise probabilities r[i] "
          "(r[i, a, b] = P(a | a or b)): min ½ pᵀQp, Σp = 1, Q_tt = Σ_{j≠t} r_jt², Q_tj = −r_jt r_tj (Wu, Lin & Weng "
          "2004, method 2) by LIBSVM's fixed-point iteration to max_t |(Qp)_t − pᵀQp| < 0.005/k; threads over rows.");
}

}  // namespace svmkit
