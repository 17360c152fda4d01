// The SMO solver on one block B of the dual's variables, as LIBSVM's Solver keeps its state:
// α, G, the bounds and the active set in slots, and the rows of Q_BB gathered for them.
//
// Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
// G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
#pragma once

#include "common.hpp"
#include "smo_cholesky.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace svmkit {

// What one block solve is asked: stop below the violation `eps`, after `max_iter` pair
// updates, or when an α passes `limit` (an unbounded dual); in ν mode (LIBSVM's Solver_NU) the
// pairs stay within a y-class.
struct SmoSettings {
    double eps = 1e-3;
    i64 max_iter = 0;
    bool nu_mode = false;
    bool shrinking = true;
    double limit = 1e12;
};

// The Newton steps' factor, kept from one step to the next (Q does not change in a solve):
// H = Q over the base variables `base`, R its upper Cholesky factor, where[v] the base
// position of variable v (−1 outside, −2 held out of the base as dependent).
struct Factor {
    Matrix R, H;
    std::vector<i64> base, where;
};

// The kernel rows the block reads: row pos[s] of `store` (n_rows × n_cols, float32) holds
// K(x_kidx[s], ·).
struct RowStore {
    const float *store = nullptr;
    i64 n_rows = 0, n_cols = 0;
};

// The rows of variables that moved, with their coefficients y_b Δα_b: row pos[b] of the store.
struct MovedRows {
    RowStore rows;
    const i64 *pos = nullptr;
    const double *coef = nullptr;
    i64 count = 0;
};

// The columns j of a gradient: G_j, the data row kidx_j and y_j.
struct GradientColumns {
    double *G = nullptr;
    const i64 *kidx = nullptr;
    const double *y = nullptr;
};

// The batch solver's bindings (smo_batch.cpp), on the smo submodule.
void register_smo_batch(nb::module_ m);

// G_j += y_j Σ_b coef_b K(b, kidx_j) for the n columns j, on the calling thread's threads when
// `parallel`.
void add_moved_rows(const MovedRows &moved, const GradientColumns &cols, i64 n, bool parallel);

// One block's variables as plain memory: q variables, each with its kernel row pos[s] of
// `rows`, data row kidx[s], label y[s], bound U[s] and Q's diagonal QD[s]; `scratch` (at least
// q rows of ldq ≥ q floats) takes the rows of Q_BB. Checked by `check_block`.
struct BlockVariables {
    RowStore rows;
    i64 q = 0;
    const i64 *pos = nullptr, *kidx = nullptr;
    const double *y = nullptr, *U = nullptr, *QD = nullptr;
    float *scratch = nullptr;
    i64 ldq = 0;
};

// Throws std::invalid_argument when a variable's kernel row or data row is outside the store.
void check_block(const BlockVariables &b);

class SmoBlock {
  public:
    // The block's variables: kernel rows, data rows, labels, bounds and Q's diagonal; `scratch`
    // (at least q × q) takes the rows of Q_BB gathered as the pairs need them.
    SmoBlock(Mat<const float> store, Vec<const i64> pos, Vec<const i64> kidx, Vec<const double> y,
             Vec<const double> U, Vec<const double> QD, Mat<float> scratch);
    // The same on plain memory that outlives the solver (checked by the caller).
    explicit SmoBlock(const BlockVariables &b);
    SmoBlock() = default;
    // Takes the variables of another problem, reusing this block's memory (a batch of many
    // small problems on one thread).
    void load(const BlockVariables &b);

    // LIBSVM's SMO, second-order selection and shrinking, from `alpha` and `G` (the block's
    // gradient, exact on entry), which it updates in place; polls `stop` every few hundred
    // pair updates (an interrupted fit). Returns the pair updates.
    i64 solve(Vec<double> alpha, Vec<double> G, const SmoSettings &settings, Vec<const std::uint8_t> stop);
    // The same on plain memory: q values each in alpha and G, one flag in stop.
    i64 solve(double *alpha, double *G, const SmoSettings &settings, const std::uint8_t *stop);

    // The Newton factor covering the given free slots (every slot active), kept from the call
    // before; whether it was built anew. For tests.
    bool newton_factor(const std::vector<i64> &free);
    const Factor &factor() const { return fac; }
    double credit() const { return credit_; }

  private:
    // slots: the active ones (not shrunk) are 0..m-1, as in LIBSVM, so every loop of an
    // iteration runs over contiguous memory
    i64 q = 0, m = 0;
    std::vector<double> y, alpha, G, U, QD, alpha0, G0;  // α0, G0: at entry, for `reconstruct`
    std::vector<i64> kidx, pos, var;                      // var: the block's variable in the slot
    // Q rows: storage row of each slot (−1: none), valid prefix of each storage row, rows in use
    std::vector<i64> row_of, row_len;
    i64 rows_used = 0;
    float *Qs = nullptr;
    i64 ldq = 0;
    RowStore rows;
    Mat<const float> store_array;  // held so that the memory stays alive
    Mat<float> scratch_array;
    Factor fac;
    // pair-update work not yet spent on Newton steps, in flops
    double credit_ = 0.0;

    void reset();
    float *qrow(i64 s);
    void swap(i64 a, i64 b);
    std::pair<i64, i64> select(bool nu_mode, double &gap);
    void update_pair(i64 i, i64 j);
    void reconstruct();
    bool be_shrunk(i64 t, const double *g) const;
    void shrink(double eps, bool nu_mode, bool &unshrunk);
    i64 pair_updates(const SmoSettings &s, i64 count, bool &optimal, bool &unbounded);

    // Newton steps (smo_newton.cpp)
    std::vector<i64> free_slots() const;
    std::vector<i64> base_slots() const;
    std::vector<i64> entering(const std::vector<i64> &free) const;
    double step_flops(const std::vector<i64> &free) const;
    void rebuild(const std::vector<i64> &free);
    bool extend_factor(const std::vector<i64> &free);
    double newton(bool nu_mode, const std::vector<i64> &free, double eps);
    double descend(const std::vector<i64> &bs, const std::vector<double> &u, const Matrix &A, Matrix W,
                   std::vector<i64> held, std::vector<double> d, std::vector<double> &delta);
    void move(const std::vector<i64> &bs, const std::vector<double> &delta);
    void newton_steps(bool nu_mode, double eps);
};

}  // namespace svmkit
