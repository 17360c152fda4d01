// The block's pair updates: second-order selection, the analytic two-variable step, LIBSVM's
// shrinking, and the loop that runs them with Newton steps (see smo_block.hpp).
#include "smo_block.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace svmkit {

namespace {

constexpr double TAU = 1e-12;
// Pair updates between two Newton checks (LIBSVM shrinks every min(l, 1000)): warm-started
// solves of a search often end within 1,000 updates, before LIBSVM's first pass would have
// shrunk anything.
constexpr i64 SHRINK_EVERY = 200;
// Checks per shrinking pass after the first check's: a pass truncates the stored Q rows at its
// first swap, and gathering them again cost more than the selection over the variables it
// removes.
constexpr i64 SHRINK_PASSES = 10;
// A pair update's time over the active set's size, in the time of one flop of a Newton step:
// the pair updates a step waits for. Above 128, a9a's blocks of 2,048 take Newton steps that cost
// more than the updates they save.
constexpr double PAIR_COST = 128.0;

constexpr double INF = std::numeric_limits<double>::infinity();

}  // namespace

// The per-slot arrays the selection reads.
struct SlotsView {
    const double *y, *alpha, *G, *U, *QD;
};

// The first variable of each side: i_p maximises −G over I_up among y > 0, i_n maximises G
// over I_low among y < 0.
struct Tops {
    double gmaxp = -INF, gmaxn = -INF;
    i64 ip = -1, in = -1;
};

// The second variable: j minimising −b²/a, and the maximal violations' other halves.
struct Partner {
    double gmaxp2 = -INF, gmaxn2 = -INF;
    i64 j = -1;
};

// (The loops read the slots through local pointers and keep their results in locals until the
// end: a store through the result could otherwise alias the slots and reload them every step.)
SVMKIT_CLONES Tops select_tops(const SlotsView &s, i64 m) {
    const double *__restrict__ y = s.y;
    const double *__restrict__ alpha = s.alpha;
    const double *__restrict__ G = s.G;
    const double *__restrict__ U = s.U;
    double gmaxp = -INF, gmaxn = -INF;
    i64 ip = -1, in = -1;
    for (i64 k = 0; k < m; ++k) {
        if (y[k] > 0) {
            if (alpha[k] < U[k] && -G[k] >= gmaxp) {
                gmaxp = -G[k];
                ip = k;
            }
        } else if (alpha[k] > 0 && G[k] >= gmaxn) {
            gmaxn = G[k];
            in = k;
        }
    }
    Tops t;
    t.gmaxp = gmaxp;
    t.gmaxn = gmaxn;
    t.ip = ip;
    t.in = in;
    return t;
}

namespace {

// Slot t as the partner of the pair whose gradient gap is gd > 0 and whose quad is
// QD_i + QD_t − 2 y_i y_t Q_it: kept when its decrease −gd²/quad (quad ≤ 0 floored at τ, as
// LIBSVM's) is the best so far, a tie going to the later slot.
inline void consider_partner(i64 t, double gd, double quad, double &best, i64 &j) {
    if (quad <= 0)
        quad = TAU;
    const double od = -(gd * gd) / quad;
    if (od <= best) {
        best = od;
        j = t;
    }
}

}  // namespace

SVMKIT_CLONES Partner select_partner(const SlotsView &s, i64 m, const Tops &tops, const float *Qp,
                                     const float *Qn) {
    const double *__restrict__ y = s.y;
    const double *__restrict__ alpha = s.alpha;
    const double *__restrict__ G = s.G;
    const double *__restrict__ U = s.U;
    const double *__restrict__ QD = s.QD;
    const i64 ip = tops.ip, in = tops.in;
    const double gmaxp = tops.gmaxp, gmaxn = tops.gmaxn;
    // the terms of i's own in each class's quad: QD_i and 2 y_i
    const double qdp = ip >= 0 ? QD[ip] : 0.0, yp2 = ip >= 0 ? 2.0 * y[ip] : 0.0;
    const double qdn = in >= 0 ? QD[in] : 0.0, yn2 = in >= 0 ? 2.0 * y[in] : 0.0;
    double gmaxp2 = -INF, gmaxn2 = -INF, best = INF;
    i64 j = -1;
    for (i64 t = 0; t < m; ++t) {
        if (y[t] > 0) {
            if (alpha[t] > 0) {
                const double gd = gmaxp + G[t];
                if (G[t] >= gmaxp2)
                    gmaxp2 = G[t];
                if (gd > 0 && ip >= 0)
                    consider_partner(t, gd, qdp + QD[t] - yp2 * double(Qp[t]), best, j);
            }
        } else if (alpha[t] < U[t]) {
            const double gd = gmaxn - G[t];
            if (-G[t] >= gmaxn2)
                gmaxn2 = -G[t];
            if (gd > 0 && in >= 0)
                consider_partner(t, gd, qdn + QD[t] + yn2 * double(Qn[t]), best, j);
        }
    }
    Partner p;
    p.gmaxp2 = gmaxp2;
    p.gmaxn2 = gmaxn2;
    p.j = j;
    return p;
}

SVMKIT_CLONES void add_pair_rows(double *G, const float *Qi, const float *Qj, double dai, double daj, i64 m) {
    for (i64 t = 0; t < m; ++t)
        G[t] += double(Qi[t]) * dai + double(Qj[t]) * daj;
}

// Q row entries L..m-1 of a slot of label ys whose kernel row is src.
SVMKIT_CLONES void gather_q(float *row, const float *src, const double *y, const i64 *kidx, double ys, i64 L,
                            i64 m) {
    for (i64 t = L; t < m; ++t)
        row[t] = float(ys * y[t] * double(src[kidx[t]]));
}

void check_block(const BlockVariables &b) {
    for (i64 s = 0; s < b.q; ++s) {
        if (b.pos[s] < 0 || b.pos[s] >= b.rows.n_rows)
            throw std::invalid_argument("pos holds a row outside the kernel store");
        if (b.kidx[s] < 0 || b.kidx[s] >= b.rows.n_cols)
            throw std::invalid_argument("kidx holds a column outside the kernel store");
    }
}

namespace {

BlockVariables block_of(Mat<const float> store, Vec<const i64> pos, Vec<const i64> kidx, Vec<const double> y,
                        Vec<const double> U, Vec<const double> QD, Mat<float> scratch) {
    const i64 q = i64(y.shape(0));
    if (i64(pos.shape(0)) != q || i64(kidx.shape(0)) != q || i64(U.shape(0)) != q || i64(QD.shape(0)) != q)
        throw std::invalid_argument("pos, kidx, y, U and QD must have one entry per variable of the block");
    if (i64(scratch.shape(0)) < q || i64(scratch.shape(1)) < q)
        throw std::invalid_argument("the scratch for Q rows must be at least q × q");
    const BlockVariables b{{store.data(), i64(store.shape(0)), i64(store.shape(1))}, q, pos.data(), kidx.data(),
                           y.data(), U.data(), QD.data(), scratch.data(), i64(scratch.shape(1))};
    check_block(b);
    return b;
}

}  // namespace

SmoBlock::SmoBlock(Mat<const float> store, Vec<const i64> pos_, Vec<const i64> kidx_, Vec<const double> y_,
                   Vec<const double> U_, Vec<const double> QD_, Mat<float> scratch)
    : SmoBlock(block_of(store, pos_, kidx_, y_, U_, QD_, scratch)) {
    store_array = store;
    scratch_array = scratch;
}

SmoBlock::SmoBlock(const BlockVariables &b) { load(b); }

void SmoBlock::load(const BlockVariables &b) {
    q = b.q;
    rows = b.rows;
    Qs = b.scratch;
    ldq = b.ldq;
    y.assign(b.y, b.y + q);
    U.assign(b.U, b.U + q);
    QD.assign(b.QD, b.QD + q);
    kidx.assign(b.kidx, b.kidx + q);
    pos.assign(b.pos, b.pos + q);
    alpha.assign(q, 0.0);
    G.assign(q, 0.0);
    alpha0.assign(q, 0.0);
    G0.assign(q, 0.0);
    var.resize(q);
    for (i64 s = 0; s < q; ++s)
        var[s] = s;
    reset();
}

void SmoBlock::reset() {
    // slots back in the variables' order (already so unless a solve swapped them)
    bool in_order = true;
    for (i64 s = 0; s < q && in_order; ++s)
        in_order = var[s] == s;
    if (!in_order) {
        auto order = [&](auto &v) {
            auto copy = v;
            for (i64 s = 0; s < q; ++s)
                v[var[s]] = copy[s];
        };
        order(y);
        order(alpha);
        order(G);
        order(U);
        order(QD);
        order(kidx);
        order(pos);
        order(alpha0);
        order(G0);
        for (i64 s = 0; s < q; ++s)
            var[s] = s;
    }
    m = q;
    row_of.assign(q, -1);
    row_len.assign(q, 0);
    rows_used = 0;
    fac.R = Matrix();
    fac.H = Matrix();
    fac.base.assign(q, 0);
    fac.where.assign(q, -1);
    credit_ = 0.0;
}

// The storage row (of Qs) holding row s of Q_BB over slots 0..m-1, gathered from the kernel
// store on first need. A storage row stays valid on a prefix of slots (`shrink` truncates it
// after swaps).
float *SmoBlock::qrow(i64 s) {
    i64 r = row_of[s];
    if (r < 0) {
        r = rows_used++;
        row_of[s] = r;
        row_len[r] = 0;
    }
    const i64 L = row_len[r];
    float *row = Qs + r * ldq;
    if (L < m) {
        gather_q(row, rows.store + pos[s] * rows.n_cols, y.data(), kidx.data(), y[s], L, m);
        if (s >= L)
            row[s] = float(QD[s]);
        row_len[r] = m;
    }
    return row;
}

// Exchange slots a < b. Stored Q rows keep their columns; `shrink` truncates them.
void SmoBlock::swap(i64 a, i64 b) {
    std::swap(y[a], y[b]);
    std::swap(alpha[a], alpha[b]);
    std::swap(G[a], G[b]);
    std::swap(U[a], U[b]);
    std::swap(QD[a], QD[b]);
    std::swap(kidx[a], kidx[b]);
    std::swap(pos[a], pos[b]);
    std::swap(var[a], var[b]);
    std::swap(alpha0[a], alpha0[b]);
    std::swap(G0[a], G0[b]);
    std::swap(row_of[a], row_of[b]);
}

// Second-order working-set selection (Fan, Chen & Lin 2005) over the active slots: i maximises
// −y_t G_t over I_up; j minimises −b²/a over I_low. In ν mode (LIBSVM's Solver_NU) i is chosen
// within each y-class and j is paired with the i of its own class. Returns (i, j) and the
// maximal violation; j = −1 when no pair violates.
std::pair<i64, i64> SmoBlock::select(bool nu_mode, double &gap) {
    const SlotsView view{y.data(), alpha.data(), G.data(), U.data(), QD.data()};
    Tops tops = select_tops(view, m);
    if (!nu_mode) {
        if (tops.gmaxp >= tops.gmaxn) {
            tops.in = tops.ip;
            tops.gmaxn = tops.gmaxp;
        } else {
            tops.ip = tops.in;
            tops.gmaxp = tops.gmaxn;
        }
    }
    const float *Qp = tops.ip >= 0 ? qrow(tops.ip) : Qs;
    const float *Qn = tops.in >= 0 ? qrow(tops.in) : Qs;
    const Partner p = select_partner(view, m, tops, Qp, Qn);
    gap = std::max(tops.gmaxp + p.gmaxp2, tops.gmaxn + p.gmaxn2);
    if (p.j < 0)
        return {-1, -1};
    return {y[p.j] > 0 ? tops.ip : tops.in, p.j};
}

// LIBSVM's analytic two-variable step with clipping to the box; updates G on the active slots.
void SmoBlock::update_pair(i64 i, i64 j) {
    const float *Qi = qrow(i);
    const float *Qj = qrow(j);
    double ai = alpha[i], aj = alpha[j];
    const double Ci = U[i], Cj = U[j];
    if (y[i] != y[j]) {
        double quad = QD[i] + QD[j] + 2.0 * double(Qi[j]);
        if (quad <= 0)
            quad = TAU;
        const double delta = (-G[i] - G[j]) / quad;
        const double diff = ai - aj;
        ai += delta;
        aj += delta;
        if (diff > 0) {
            if (aj < 0) {
                aj = 0.0;
                ai = diff;
            }
        } else if (ai < 0) {
            ai = 0.0;
            aj = -diff;
        }
        if (diff > Ci - Cj) {
            if (ai > Ci) {
                ai = Ci;
                aj = Ci - diff;
            }
        } else if (aj > Cj) {
            aj = Cj;
            ai = Cj + diff;
        }
    } else {
        double quad = QD[i] + QD[j] - 2.0 * double(Qi[j]);
        if (quad <= 0)
            quad = TAU;
        const double delta = (G[i] - G[j]) / quad;
        const double s = ai + aj;
        ai -= delta;
        aj += delta;
        // the sum s held: a above its bound C goes to C (b to s − C), or, where s ≤ C, b below 0
        // goes to 0 (a to s); first for i, then for j
        auto clip = [s](double &a, double &b, double C) {
            if (s > C) {
                if (a > C) {
                    a = C;
                    b = s - C;
                }
            } else if (b < 0) {
                b = 0.0;
                a = s;
            }
        };
        clip(ai, aj, Ci);
        clip(aj, ai, Cj);
    }
    const double dai = ai - alpha[i], daj = aj - alpha[j];
    alpha[i] = ai;
    alpha[j] = aj;
    add_pair_rows(G.data(), Qi, Qj, dai, daj, m);
}

// Exact gradients for the shrunk slots m..q-1: G = G⁰ + Σ_s Q[:, s] (α_s − α⁰_s).
void SmoBlock::reconstruct() {
    std::copy(G0.begin() + m, G0.end(), G.begin() + m);
    std::vector<i64> moved_pos;
    std::vector<double> coef;
    for (i64 s = 0; s < q; ++s) {
        if (alpha[s] != alpha0[s]) {
            moved_pos.push_back(pos[s]);
            coef.push_back(y[s] * (alpha[s] - alpha0[s]));
        }
    }
    const MovedRows moved{rows, moved_pos.data(), coef.data(), i64(coef.size())};
    add_moved_rows(moved, GradientColumns{G.data() + m, kidx.data() + m, y.data() + m}, q - m, false);
}

// LIBSVM's rule: a variable at a bound that cannot join a violating pair (g: g1..g4 of `shrink`).
bool SmoBlock::be_shrunk(i64 t, const double *g) const {
    if (alpha[t] >= U[t])
        return y[t] > 0 ? -G[t] > g[0] : -G[t] > g[3];
    if (alpha[t] <= 0)
        return y[t] > 0 ? G[t] > g[1] : G[t] > g[2];
    return false;
}

// LIBSVM's shrinking pass on the active slots. The first time the active violation is within
// 10·eps every gradient is rebuilt and every variable made active again (`unshrunk` records it),
// as LIBSVM does.
void SmoBlock::shrink(double eps, bool nu_mode, bool &unshrunk) {
    double g[4] = {-INF, -INF, -INF, -INF};
    for (i64 t = 0; t < m; ++t) {
        if (alpha[t] < U[t]) {
            if (y[t] > 0)
                g[0] = std::max(g[0], -G[t]);
            else
                g[3] = std::max(g[3], -G[t]);
        }
        if (alpha[t] > 0) {
            if (y[t] > 0)
                g[1] = std::max(g[1], G[t]);
            else
                g[2] = std::max(g[2], G[t]);
        }
    }
    if (!nu_mode) {
        g[0] = g[2] = std::max(g[0], g[2]);
        g[1] = g[3] = std::max(g[1], g[3]);
    }
    if (!unshrunk && std::max(g[0] + g[1], g[2] + g[3]) <= 10 * eps) {
        unshrunk = true;
        reconstruct();
        m = q;
    }
    i64 first = m;
    for (i64 k = 0; k < m; ++k) {
        if (be_shrunk(k, g)) {
            --m;
            while (m > k) {
                if (!be_shrunk(m, g)) {
                    swap(k, m);
                    first = std::min(first, k);
                    break;
                }
                --m;
            }
        }
    }
    // a swap leaves stored rows wrong from its first slot on: they are gathered again there on
    // next use, which costs less than swapping two columns of every stored row
    for (i64 r = 0; r < rows_used; ++r)
        row_len[r] = std::min(row_len[r], first);
}

// Up to `count` pair updates on the active slots, each adding its cost to the credit. Returns
// the updates made; `optimal`: a selection found no pair violating by eps; `unbounded`: an α
// passed the limit.
i64 SmoBlock::pair_updates(const SmoSettings &s, i64 count, bool &optimal, bool &unbounded) {
    optimal = unbounded = false;
    for (i64 k = 0; k < count; ++k) {
        double gap;
        const auto [i, j] = select(s.nu_mode, gap);
        if (gap < s.eps || j < 0) {
            optimal = true;
            return k;
        }
        update_pair(i, j);
        credit_ += PAIR_COST * double(m);
        if (alpha[i] > s.limit || alpha[j] > s.limit) {
            unbounded = true;
            return k + 1;
        }
    }
    return count;
}

i64 SmoBlock::solve(Vec<double> alpha_io, Vec<double> G_io, const SmoSettings &s, Vec<const std::uint8_t> stop) {
    if (i64(alpha_io.shape(0)) != q || i64(G_io.shape(0)) != q)
        throw std::invalid_argument("alpha and G must have one entry per variable of the block");
    if (stop.shape(0) < 1)
        throw std::invalid_argument("stop must hold one flag");
    return solve(alpha_io.data(), G_io.data(), s, stop.data());
}

i64 SmoBlock::solve(double *alpha_io, double *G_io, const SmoSettings &s, const std::uint8_t *stop) {
    if (q == 0)
        return 0;
    reset();
    std::copy(alpha_io, alpha_io + q, alpha.begin());
    std::copy(G_io, G_io + q, G.begin());
    alpha0 = alpha;
    G0 = G;
    bool unshrunk = !s.shrinking;
    i64 counter = std::min(q, SHRINK_EVERY) - 1;  // pair updates before the next check
    i64 checks = 0, it = 0;
    while (it < s.max_iter) {
        if (counter == 0) {
            if (stopped(stop))
                break;
            counter = std::min(q, SHRINK_EVERY);
            ++checks;
            if (s.shrinking && checks % SHRINK_PASSES == 1)
                shrink(s.eps, s.nu_mode, unshrunk);
            newton_steps(s.nu_mode, s.eps);
        }
        bool optimal, unbounded;
        const i64 done = pair_updates(s, std::min(counter, s.max_iter - it), optimal, unbounded);
        it += done;
        counter -= done;
        if (unbounded)
            break;
        if (optimal) {
            if (m == q)
                break;
            reconstruct();
            m = q;
            counter = 1;  // the shrunk variables back: one update over all, then a check
        }
    }
    if (m < q) {
        reconstruct();
        m = q;
    }
    for (i64 t = 0; t < q; ++t) {
        alpha_io[var[t]] = alpha[t];
        G_io[var[t]] = G[t];
    }
    return it;
}

bool SmoBlock::newton_factor(const std::vector<i64> &free) {
    for (const i64 s : free)
        if (s < 0 || s >= q)
            throw std::invalid_argument("a free slot is outside the block");
    m = q;
    return extend_factor(free);
}

}  // namespace svmkit
