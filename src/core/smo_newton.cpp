// The Newton step of the SMO block loop: when pair updates have cost as much, the free
// variables' reduced KKT system is solved on a Cholesky factor kept from step to step.
#include "smo_block.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace svmkit {

namespace {

// Newton steps in a row while each stops at a bound (the bounded variable leaves the free set).
constexpr int NEWTON_TRIES = 3;
// Newton solves in one step while its full step leaves the box (each sends the leavers to their
// bound; a re-solve costs a triangular solve per variable sent).
constexpr int NEWTON_RESOLVES = 10;
// Blocks of fewer variables take no Newton steps: pair updates reach their optimum in about as
// few updates, without a factor's allocations.
constexpr i64 NEWTON_MIN_BLOCK = 8;
// Smallest squared Cholesky pivot of Q_FF, relative to its largest diagonal, for a Newton step.
constexpr double NEWTON_PIVOT = 1e-10;

// The largest diagonal entry (NaN when one is; 0 for an empty matrix, all of whose rows the
// factorisation then keeps).
double max_diagonal(const Matrix &A) {
    if (A.rows == 0)
        return 0.0;
    double top = A[0][0];
    for (i64 i = 0; i < A.rows && !std::isnan(top); ++i)
        top = std::isnan(A[i][i]) || A[i][i] > top ? A[i][i] : top;
    return top;
}

// Flops of a Newton step on a kept factor of k0 variables: a entering variables (triangular
// solves and the Schur complement's factorisation) and `held` base variables that left the
// free set (a solve each).
double extend_flops(i64 k0, i64 a, i64 held) {
    const i64 k = k0 + a;
    return double(k0 * k0 * a + k0 * a * a) + double(a * a * a) / 3.0 + 2.0 * double(k) * double(k) * double(held);
}

// (flops, whether the kept factor is extended) for factoring k free variables, a of them
// entering a kept factor of k0: its extension (`extend_flops`, the base's k0 − (k − a)
// variables no longer free held) or a new factor (k³/3), whichever is fewer.
std::pair<double, bool> factor_flops(i64 k0, i64 k, i64 a) {
    const double fresh = double(k * k * k) / 3.0;
    if (k0 == 0)
        return {fresh, false};
    const double kept = extend_flops(k0, a, k0 - (k - a));
    return {std::min(fresh, kept), kept < fresh};
}

// Columns side by side: [L, R].
Matrix beside(const Matrix &L, const Matrix &R) {
    Matrix out(L.rows, L.cols + R.cols);
    for (i64 i = 0; i < L.rows; ++i) {
        std::copy(L[i], L[i] + L.cols, out[i]);
        std::copy(R[i], R[i] + R.cols, out[i] + L.cols);
    }
    return out;
}

// Rows and columns `on` of a square matrix.
Matrix square_part(const Matrix &A, const std::vector<i64> &on) {
    const i64 k = i64(on.size());
    Matrix P(k, k);
    for (i64 i = 0; i < k; ++i)
        for (i64 j = 0; j < k; ++j)
            P[i][j] = A[on[i]][on[j]];
    return P;
}

std::vector<i64> kept_rows(const std::vector<std::uint8_t> &kept) {
    std::vector<i64> on;
    for (i64 i = 0; i < i64(kept.size()); ++i)
        if (kept[i])
            on.push_back(i);
    return on;
}

// d minimising ½dᵀHd + gᵀd subject to Aᵀd = 0 and d[held] = value, from u = −H⁻¹g and
// W = H⁻¹[A, e_held]: d = u − Wλ with λ from the Schur complement S = [A, e_held]ᵀW. A column of
// A that is zero (a class with no free variable) is left out. Empty when the constraints are
// dependent (every free variable of a class held).
std::vector<double> constrained_step(const std::vector<double> &u, const Matrix &A, const Matrix &W,
                                     const std::vector<i64> &held, const std::vector<double> &value) {
    const i64 k = A.rows, nc = A.cols, nh = i64(held.size()), ns = nc + nh;
    std::vector<std::uint8_t> use(ns, 0);
    Matrix S(ns, ns);
    std::vector<double> r(ns);
    std::vector<double> At(k);
    for (i64 c = 0; c < nc; ++c) {
        for (i64 a = 0; a < k; ++a)
            At[a] = A[a][c];
        vec_mat(At.data(), W, S[c]);
        r[c] = dot(k, At.data(), u.data());
        use[c] = S[c][c] > 0;
    }
    for (i64 i = 0; i < nh; ++i) {
        std::copy(W[held[i]], W[held[i]] + ns, S[nc + i]);
        r[nc + i] = u[held[i]] - value[i];
        use[nc + i] = 1;
    }
    const std::vector<i64> on = kept_rows(use);
    const Matrix S_on = square_part(S, on);
    std::vector<std::uint8_t> kept;
    const Matrix Rs = independent_cholesky(S_on, 1e-12 * max_diagonal(S_on), kept);
    if (std::find(kept.begin(), kept.end(), 0) != kept.end())
        return {};
    Matrix r_on(i64(on.size()), 1);
    for (i64 i = 0; i < i64(on.size()); ++i)
        r_on[i][0] = r[on[i]];
    const Matrix lam = cholesky_solve(Rs, r_on);
    Matrix W_on(k, i64(on.size()));
    for (i64 a = 0; a < k; ++a)
        for (i64 i = 0; i < i64(on.size()); ++i)
            W_on[a][i] = W[a][on[i]];
    std::vector<double> d(k);
    mat_vec(W_on, lam.data(), d.data());
    for (i64 a = 0; a < k; ++a)
        d[a] = u[a] - d[a];
    return d;
}

// The largest difference of y_a·grad_a between two variables of `on` (of one class in ν mode):
// the KKT violation among free variables, zero at the step's exact solution.
double spread(const std::vector<double> &y, const std::vector<double> &grad, const std::vector<std::uint8_t> &on,
              bool nu_mode) {
    const double inf = std::numeric_limits<double>::infinity();
    double lo[2] = {inf, inf}, hi[2] = {-inf, -inf};
    for (std::size_t a = 0; a < grad.size(); ++a) {
        if (on[a]) {
            const int c = nu_mode && y[a] < 0 ? 1 : 0;
            const double v = y[a] * grad[a];
            lo[c] = std::min(lo[c], v);
            hi[c] = std::max(hi[c], v);
        }
    }
    return std::max(std::max(hi[0] - lo[0], hi[1] - lo[1]), 0.0);
}

// Whether the move δ lowers ½δᵀHδ + gᵀδ.
bool lowers(const Matrix &H, const std::vector<double> &g, const std::vector<double> &delta) {
    const i64 k = i64(delta.size());
    double change = 0.0;
    for (i64 a = 0; a < k; ++a)
        change += delta[a] * (g[a] + 0.5 * dot(k, H[a], delta.data()));
    return change < 0;
}

}  // namespace

std::vector<i64> SmoBlock::free_slots() const {
    std::vector<i64> out;
    for (i64 t = 0; t < m; ++t)
        if (0 < alpha[t] && alpha[t] < U[t])
            out.push_back(t);
    return out;
}

// The slot of each variable of the factor's base, in base order.
std::vector<i64> SmoBlock::base_slots() const {
    std::vector<i64> out(fac.R.rows, 0);
    for (i64 t = 0; t < q; ++t) {
        const i64 b = fac.where[var[t]];
        if (b >= 0)
            out[b] = t;
    }
    return out;
}

// The free slots whose variables are not in the factor's base (nor held out of it as dependent
// when it was built).
std::vector<i64> SmoBlock::entering(const std::vector<i64> &free) const {
    std::vector<i64> out;
    for (const i64 s : free)
        if (fac.where[var[s]] == -1)
            out.push_back(s);
    return out;
}

// The least flops of a Newton step on the free slots (`factor_flops`) and the gathering of the
// moved rows.
double SmoBlock::step_flops(const std::vector<i64> &free) const {
    const i64 k = i64(free.size());
    return factor_flops(fac.R.rows, k, i64(entering(free).size())).first + 2.0 * double(k) * double(m);
}

// A new factor on the free slots; a variable whose pivot is below NEWTON_PIVOT of the largest
// diagonal (a duplicate of a free row) stays out of the base, marked −2 in `where`, until the
// next rebuild.
void SmoBlock::rebuild(const std::vector<i64> &free) {
    const i64 k = i64(free.size());
    Matrix Hn(k, k);
    for (i64 i = 0; i < k; ++i) {
        const float *row = qrow(free[i]);
        for (i64 j = 0; j < k; ++j)
            Hn[i][j] = double(row[free[j]]);
    }
    credit_ -= double(k * k * k) / 3.0;
    std::vector<std::uint8_t> kept;
    const Matrix Rn = independent_cholesky(Hn, NEWTON_PIVOT * max_diagonal(Hn), kept);
    const std::vector<i64> on = kept_rows(kept);
    std::fill(fac.where.begin(), fac.where.end(), -1);
    for (i64 i = 0; i < k; ++i)
        fac.where[var[free[i]]] = -2;
    for (i64 i = 0; i < i64(on.size()); ++i) {
        fac.base[i] = var[free[on[i]]];
        fac.where[fac.base[i]] = i;
    }
    fac.R = square_part(Rn, on);
    fac.H = square_part(Hn, on);
}

// The factor covering the free slots. Q does not change within a solve, so the factor of an
// earlier step is extended by the entering variables (R₁₂ = R₀⁻ᵀQ_{0,new}, R₂₂ the factor of the
// Schur complement), its base variables that left the free set being held in the step. It is
// rebuilt when that costs fewer flops, or when an entering variable is dependent on the base:
// the base may hold variables no longer free, on which it may depend and the free set not.
// Returns whether it was rebuilt.
bool SmoBlock::extend_factor(const std::vector<i64> &free) {
    const i64 k0 = fac.R.rows, k = i64(free.size());
    const std::vector<i64> fresh = entering(free);
    const i64 a = i64(fresh.size());
    if (!factor_flops(k0, k, a).second) {
        rebuild(free);
        return true;
    }
    if (a == 0)
        return false;
    const std::vector<i64> bs = base_slots();
    Matrix B(k0, a), C(a, a);
    for (i64 j = 0; j < a; ++j) {
        const i64 sj = fresh[j];
        const float *src = rows.store + pos[sj] * rows.n_cols;
        for (i64 i = 0; i < k0; ++i)
            B[i][j] = y[sj] * y[bs[i]] * double(src[kidx[bs[i]]]);
        for (i64 t = 0; t < a; ++t)
            C[j][t] = t == j ? QD[sj] : y[sj] * y[fresh[t]] * double(src[kidx[fresh[t]]]);
    }
    credit_ -= extend_flops(k0, a, 0);
    const Matrix W = forward_solve(fac.R, B);
    Matrix Sc(a, a);
    product(a, a, k0, W.data(), true, W.data(), Sc.data());
    for (i64 j = 0; j < a; ++j)
        for (i64 t = 0; t < a; ++t)
            Sc[j][t] = C[j][t] - Sc[j][t];
    std::vector<std::uint8_t> kept;
    const Matrix Rs = independent_cholesky(Sc, NEWTON_PIVOT * std::max(max_diagonal(fac.H), max_diagonal(C)), kept);
    if (std::find(kept.begin(), kept.end(), 0) != kept.end()) {
        rebuild(free);
        return true;
    }
    const i64 k1 = k0 + a;
    Matrix Rx = Matrix::zeros(k1, k1), Hx(k1, k1);
    for (i64 i = 0; i < k0; ++i) {
        std::copy(fac.R[i], fac.R[i] + k0, Rx[i]);
        std::copy(fac.H[i], fac.H[i] + k0, Hx[i]);
        std::copy(W[i], W[i] + a, Rx[i] + k0);
        std::copy(B[i], B[i] + a, Hx[i] + k0);
    }
    for (i64 j = 0; j < a; ++j) {
        std::copy(Rs[j], Rs[j] + a, Rx[k0 + j] + k0);
        std::copy(C[j], C[j] + a, Hx[k0 + j] + k0);
        for (i64 i = 0; i < k0; ++i)
            Hx[k0 + j][i] = B[i][j];
    }
    for (i64 j = 0; j < a; ++j) {
        fac.base[k0 + j] = var[fresh[j]];
        fac.where[fac.base[k0 + j]] = k0 + j;
    }
    fac.R = std::move(Rx);
    fac.H = std::move(Hx);
    return false;
}

// One Newton step on the free variables F among the active slots, the bounded ones held: d
// minimises ½dᵀQ_FF d + G_Fᵀd under the equality constraints A d = 0 (yᵀd = 0, or in ν mode the
// sum of d over each class), as d = u − Wλ with Q u = −G, W = Q⁻¹[A, e_held] and λ from the
// Schur complement, on the factor `extend_factor` keeps: the variables of its base that are no
// longer free are held by unit constraints d_a = 0. A free variable whose row of Q_FF is (to a
// pivot of NEWTON_PIVOT of the largest diagonal) a combination of the others', such as a
// duplicate of a free training row, is held too: Q_FF is singular there and the objective flat.
//
// When the full step leaves the box, the variables it takes out are sent to the bound they cross
// and the step is solved again with them held there (d_a = δ_a, through the same factor: a
// triangular solve per variable sent rather than a factorisation), up to NEWTON_RESOLVES times,
// as an active-set method changes many bounds at once; that move is taken when it stays in the
// box and lowers the objective (returns 1), unless the free variables' gradients after it still
// violate by more than `eps` on an extended factor (rounding in the Schur complement of an
// ill-conditioned Q_FF): then nothing moves and it returns −1, for a step on a new factor.
// Otherwise (sending every leaver at once can raise the objective when Q_FF is near-singular)
// α_F descends by the primal active-set method (`descend`). Returns 1 when the step was solved
// in the box, 0.5 when the active-set method stopped short, 0 when nothing moved because no move
// lowers the objective. The flops of the factorisation and of the solves are taken from the
// credit.
double SmoBlock::newton(bool nu_mode, const std::vector<i64> &free, double eps) {
    const bool rebuilt = extend_factor(free);
    const Matrix &R = fac.R, &H = fac.H;
    const i64 k = R.rows;
    credit_ -= 2.0 * double(k) * double(m);
    const std::vector<i64> bs = base_slots();
    const i64 nc = nu_mode ? 2 : 1;
    std::vector<double> g(k, 0.0);
    std::vector<std::uint8_t> sent(k, 0);
    // Q⁻¹[−g, A]: the unconstrained step and the directions of the equality constraints
    Matrix B = Matrix::zeros(k, 1 + nc);
    for (i64 a = 0; a < k; ++a) {
        const i64 s = bs[a];
        const bool moves = s < m && 0 < alpha[s] && alpha[s] < U[s];
        sent[a] = !moves;
        if (moves) {
            g[a] = G[s];
            B[a][0] = -g[a];
            B[a][nu_mode && y[s] < 0 ? 2 : 1] = nu_mode ? 1.0 : y[s];
        }
    }
    const Matrix X = cholesky_solve(R, B);
    std::vector<double> u(k);
    Matrix A(k, nc), W(k, nc);
    for (i64 a = 0; a < k; ++a) {
        u[a] = X[a][0];
        for (i64 c = 0; c < nc; ++c) {
            A[a][c] = B[a][1 + c];
            W[a][c] = X[a][1 + c];
        }
    }
    std::vector<double> delta(k, 0.0);
    // held variables in the order their unit constraints join W: first the base's variables
    // that are no longer free (d = 0), then those each solve sends to a bound
    std::vector<i64> order;
    for (i64 a = 0; a < k; ++a)
        if (sent[a])
            order.push_back(a);
    const i64 n_fixed = i64(order.size());
    i64 solved = 0;
    std::vector<double> d_full;
    for (int solves = 0; solves < NEWTON_RESOLVES; ++solves) {
        const i64 n_sent = i64(order.size());
        if (n_sent > solved) {
            Matrix E = Matrix::zeros(k, n_sent - solved);
            for (i64 i = solved; i < n_sent; ++i)
                E[order[i]][i - solved] = 1.0;
            credit_ -= 2.0 * double(k) * double(k) * double(n_sent - solved);
            W = beside(W, cholesky_solve(R, E));
            solved = n_sent;
        }
        std::vector<double> value(n_sent);
        for (i64 i = 0; i < n_sent; ++i)
            value[i] = delta[order[i]];
        const std::vector<double> d = constrained_step(u, A, W, order, value);
        if (d.empty()) {
            if (solves == 0)
                return 0.0;
            break;
        }
        if (solves == 0)
            d_full = d;
        for (i64 a = 0; a < k; ++a) {
            if (sent[a])
                continue;
            const double v = alpha[bs[a]] + d[a];
            if (v > U[bs[a]] || v < 0) {
                delta[a] = (v > U[bs[a]] ? U[bs[a]] : 0.0) - alpha[bs[a]];
                sent[a] = 1;
                order.push_back(a);
            }
        }
        if (i64(order.size()) == solved) {
            std::vector<std::uint8_t> on(k);
            for (i64 a = 0; a < k; ++a) {
                if (!sent[a])
                    delta[a] = d[a];
                on[a] = !sent[a];
            }
            if (!rebuilt) {
                std::vector<double> grad(k), yb(k);
                mat_vec(H, delta.data(), grad.data());
                for (i64 a = 0; a < k; ++a) {
                    grad[a] = g[a] + grad[a];
                    yb[a] = y[bs[a]];
                }
                if (spread(yb, grad, on, nu_mode) > eps)
                    return -1.0;
            }
            if (lowers(H, g, delta)) {
                move(bs, delta);
                return 1.0;
            }
            break;
        }
        if (i64(order.size()) == k)
            break;
    }
    Matrix W_fixed(k, nc + n_fixed);
    for (i64 a = 0; a < k; ++a)
        std::copy(W[a], W[a] + nc + n_fixed, W_fixed[a]);
    std::vector<double> step;
    const double t = descend(bs, u, A, std::move(W_fixed), std::vector<i64>(order.begin(), order.begin() + n_fixed),
                             d_full, step);
    // an ill-conditioned Q_FF gives a step whose rounding errors outweigh its gain
    if (!lowers(H, g, step))
        return 0.0;
    move(bs, step);
    return t;
}

// The primal active-set method on the Newton step's subproblem, from δ = 0: move along d − δ to
// the first bound, hold the variable that reaches it there and solve again (d from
// `constrained_step`, a triangular solve per variable held), up to NEWTON_RESOLVES times. Each
// move lowers the objective (a convex quadratic on each subspace). `held` are the base's
// variables already held at 0 (W = R⁻¹R⁻ᵀ[A, e_held]), d the step with only them held. Returns
// 1 when the last solve stayed in the box, else 0.5; the move in `delta`.
double SmoBlock::descend(const std::vector<i64> &bs, const std::vector<double> &u, const Matrix &A, Matrix W,
                         std::vector<i64> held, std::vector<double> d, std::vector<double> &delta) {
    const i64 k = i64(d.size());
    delta.assign(k, 0.0);
    std::vector<std::uint8_t> is_held(k, 0);
    for (const i64 a : held)
        is_held[a] = 1;
    for (int round = 0; round < NEWTON_RESOLVES; ++round) {
        double tau = 1.0;
        i64 block = -1;
        for (i64 a = 0; a < k; ++a) {
            if (is_held[a])
                continue;
            const double p = d[a] - delta[a];
            const double x = alpha[bs[a]] + delta[a];
            double r;
            if (p > 0 && x + p > U[bs[a]])
                r = (U[bs[a]] - x) / p;
            else if (p < 0 && x + p < 0)
                r = -x / p;
            else
                continue;
            if (r < tau) {
                tau = r;
                block = a;
            }
        }
        const bool to_upper = block >= 0 && d[block] > delta[block];
        for (i64 a = 0; a < k; ++a)
            if (!is_held[a])
                delta[a] += tau * (d[a] - delta[a]);
        if (block < 0)
            return 1.0;
        delta[block] = (to_upper ? U[bs[block]] : 0.0) - alpha[bs[block]];
        is_held[block] = 1;
        held.push_back(block);
        Matrix e = Matrix::zeros(k, 1);
        e[block][0] = 1.0;
        credit_ -= 2.0 * double(k) * double(k);
        W = beside(W, cholesky_solve(fac.R, e));
        std::vector<double> value(held.size());
        for (std::size_t i = 0; i < held.size(); ++i)
            value[i] = delta[held[i]];
        d = constrained_step(u, A, W, held, value);
        if (d.empty())
            break;
    }
    return 0.5;
}

void SmoBlock::move(const std::vector<i64> &bs, const std::vector<double> &delta) {
    for (std::size_t a = 0; a < delta.size(); ++a) {
        if (delta[a] != 0) {
            const i64 fa = bs[a];
            alpha[fa] += delta[a];
            const float *row = qrow(fa);
            for (i64 s = 0; s < m; ++s)
                G[s] += double(row[s]) * delta[a];
        }
    }
}

// Newton steps on the free variables among the active slots while the pair updates' credit
// covers one (`step_flops`), up to NEWTON_TRIES in a row while each stops at a bound; a step
// that asks for a new factor gets one.
void SmoBlock::newton_steps(bool nu_mode, double eps) {
    if (q < NEWTON_MIN_BLOCK)
        return;
    std::vector<i64> free = free_slots();
    for (int tries = 0; tries < NEWTON_TRIES; ++tries) {
        if (free.size() < 2 || credit_ < step_flops(free))
            break;
        const double t = newton(nu_mode, free, eps);
        if (t < 0) {
            fac.R = Matrix();
            fac.H = Matrix();
            continue;
        }
        if (!(0 < t && t < 1))
            break;
        free = free_slots();
    }
}

}  // namespace svmkit
