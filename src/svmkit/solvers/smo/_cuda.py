"""The SMO solver's compiled loops on an NVIDIA GPU: CUDA kernels compiled at run time by CuPy.

With the arguments of `_loops`' functions, they do on the device the working-set
subproblem (LIBSVM's SMO with second-order selection, Fan, Chen & Lin 2005) in one thread
block, and the gradient update over the rows of the variables that moved. The subproblem runs
pair updates, with NEWTON_EVERY > 0 in chunks of that many; between two chunks that did not
reach the tolerance, one Newton step on the free variables (`newton_step`: the reduced KKT
system by cuSOLVER's Cholesky, as the host's block solver does with a kept factor) takes them
to the minimiser of the block on the free set, or as far towards it as the box allows. There
is no shrinking within the block. Notation as there: min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U,
Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]).
"""

from __future__ import annotations

import functools

import numpy as np

from svmkit._arrays import to_host
from svmkit.solvers.smo._block import Block, InnerSettings
from svmkit.solvers.dense.factorisations import CholeskyShift, NotPositiveDefiniteError

#: Threads of the block that solves a subproblem (at most 1,024, the most one block may have;
#: `bench_gpu.py`'s 'svmkit cuda threads=N' measures fewer, whose block-wide reductions
#: span fewer warps).
BLOCK_THREADS = 1024
#: Most variables of a block (the solver's FULL_BLOCK).
MOST_VARIABLES = 8192
#: Threads per block of the gradient update.
UPDATE_THREADS = 256
#: Pair updates between two Newton steps (0: pair updates only). A step's launches and host
#: syncs cost more than the updates it saves, so the block runs on pair updates alone by
#: default; `bench_gpu.py`'s 'svmkit cuda every=N' measures the steps (in a NumPy port of the
#: block kernel, steps every 300 updates cut heart_scale's C = 1000 block from 3,888 updates to
#: 1,500).
NEWTON_EVERY = 0
#: Most free variables of a Newton step (its factorisation is cubic in them).
NEWTON_MAX_FREE = 4096
#: Jitter of the Newton system, relative to its largest diagonal: Q_FF of duplicate free rows
#: is singular, and the jittered step is still a descent direction (checked before it is taken).
NEWTON_JITTER = 1e-10

_SOURCE = r"""
#define PER __PER__
#define TAU 1e-12

__device__ __forceinline__ void arg_max(double &v, int &i, double v2, int i2) {
    if (v2 > v || (v2 == v && i2 > i)) { v = v2; i = i2; }
}
__device__ __forceinline__ void arg_min(double &v, int &i, double v2, int i2) {
    if (v2 < v || (v2 == v && i2 > i)) { v = v2; i = i2; }
}

// (v0, i0) by arg_min (min0) or arg_max, (v1, i1) by arg_max, v2 by max, across one warp; lane 0
// ends with the result.
__device__ __forceinline__ void warp_reduce(double &v0, int &i0, double &v1, int &i1, double &v2, bool min0) {
    for (int off = 16; off > 0; off >>= 1) {
        double w0 = __shfl_down_sync(0xffffffffu, v0, off);
        int j0 = __shfl_down_sync(0xffffffffu, i0, off);
        double w1 = __shfl_down_sync(0xffffffffu, v1, off);
        int j1 = __shfl_down_sync(0xffffffffu, i1, off);
        double w2 = __shfl_down_sync(0xffffffffu, v2, off);
        if (min0) arg_min(v0, i0, w0, j0); else arg_max(v0, i0, w0, j0);
        arg_max(v1, i1, w1, j1);
        v2 = fmax(v2, w2);
    }
}

// The same across the block, every thread ending with the result; ties go to the larger index,
// as LIBSVM's loops (>=, <=) give them to the later variable. Two reductions in a row use
// different buffers (sv, si), so no barrier is needed after the last read.
__device__ void block_reduce(double &v0, int &i0, double &v1, int &i1, double &v2, bool min0,
                             double (*sv)[32], int (*si)[32]) {
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    warp_reduce(v0, i0, v1, i1, v2, min0);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sv[0][warp] = v0; si[0][warp] = i0; sv[1][warp] = v1; si[1][warp] = i1; sv[2][warp] = v2; }
    __syncthreads();
    if (warp == 0) {
        if (lane < (int)(blockDim.x >> 5)) {
            v0 = sv[0][lane]; i0 = si[0][lane]; v1 = sv[1][lane]; i1 = si[1][lane]; v2 = sv[2][lane];
        } else {
            v0 = min0 ? inf : -inf; i0 = -1; v1 = -inf; i1 = -1; v2 = -inf;
        }
        warp_reduce(v0, i0, v1, i1, v2, min0);
        if (lane == 0) { sv[0][0] = v0; si[0][0] = i0; sv[1][0] = v1; si[1][0] = i1; sv[2][0] = v2; }
    }
    __syncthreads();
    v0 = sv[0][0]; i0 = si[0][0]; v1 = sv[1][0]; i1 = si[1][0]; v2 = sv[2][0];
}

// SMO on q variables: Kb (q × q, float32) holds K(x_kidx[a], x_kidx[b]); alpha and G (the
// block's gradient, exact on entry) are updated in place. Variable t is held by thread
// t % blockDim.x, in its slot t / blockDim.x.
extern "C" __global__ void __launch_bounds__(1024) smo_block(const float* __restrict__ Kb, const double* __restrict__ y,
                                     double* alpha, double* G, const double* __restrict__ U,
                                     const double* __restrict__ QD, const int q, const double eps,
                                     const long long max_iter, const int nu_mode, const double limit,
                                     long long* n_iter) {
    __shared__ double sv[2][3][32];
    __shared__ int si[2][3][32];
    __shared__ double pair[4];
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    const int tid = threadIdx.x, nt = blockDim.x;
    double a[PER], g[PER], yy[PER], u[PER], qd[PER];
    for (int k = 0; k < PER; k++) {
        int t = tid + k * nt;
        if (t < q) { a[k] = alpha[t]; g[k] = G[t]; yy[k] = y[t]; u[k] = U[t]; qd[k] = QD[t]; }
        else { a[k] = 0.0; g[k] = 0.0; yy[k] = 0.0; u[k] = 0.0; qd[k] = 0.0; }
    }
    long long it = 0;
    while (it < max_iter) {
        double vp = -inf, vn = -inf, unused = -inf;
        int ip = -1, in_ = -1;
        for (int k = 0; k < PER; k++) {
            int t = tid + k * nt;
            if (yy[k] > 0) { if (a[k] < u[k] && -g[k] >= vp) { vp = -g[k]; ip = t; } }
            else if (yy[k] < 0) { if (a[k] > 0 && g[k] >= vn) { vn = g[k]; in_ = t; } }
        }
        block_reduce(vp, ip, vn, in_, unused, false, sv[0], si[0]);
        if (!nu_mode) {
            if (vp >= vn) { in_ = ip; vn = vp; } else { ip = in_; vp = vn; }
        }
        double best = inf, gp2 = -inf, gn2 = -inf;
        int j = -1, dummy = -1;
        const double qdp = ip >= 0 ? QD[ip] : 0.0, qdn = in_ >= 0 ? QD[in_] : 0.0;
        for (int k = 0; k < PER; k++) {
            int t = tid + k * nt;
            if (yy[k] > 0) {
                if (a[k] > 0) {
                    double gd = vp + g[k];
                    gp2 = fmax(gp2, g[k]);
                    if (gd > 0 && ip >= 0) {
                        double quad = qdp + qd[k] - 2.0 * (double)Kb[(long long)ip * q + t];
                        if (quad <= 0) quad = TAU;
                        double od = -(gd * gd) / quad;
                        if (od <= best) { best = od; j = t; }
                    }
                }
            } else if (yy[k] < 0) {
                if (a[k] < u[k]) {
                    double gd = vn - g[k];
                    gn2 = fmax(gn2, -g[k]);
                    if (gd > 0 && in_ >= 0) {
                        double quad = qdn + qd[k] - 2.0 * (double)Kb[(long long)in_ * q + t];
                        if (quad <= 0) quad = TAU;
                        double od = -(gd * gd) / quad;
                        if (od <= best) { best = od; j = t; }
                    }
                }
            }
        }
        block_reduce(best, j, gp2, dummy, gn2, true, sv[1], si[1]);
        double gap = fmax(vp + gp2, vn + gn2);
        if (gap < eps || j < 0) break;
        const int i = y[j] > 0 ? ip : in_;
        if (tid == i % nt) { pair[0] = a[i / nt]; pair[1] = g[i / nt]; }
        if (tid == j % nt) { pair[2] = a[j / nt]; pair[3] = g[j / nt]; }
        __syncthreads();
        // pair is written again only after the next iteration's reductions, whose barriers
        // every thread passes after this read
        const double ai0 = pair[0], Gi = pair[1], aj0 = pair[2], Gj = pair[3];
        const double yi = y[i], yj = y[j], Ci = U[i], Cj = U[j];
        const double quad0 = QD[i] + QD[j] - 2.0 * (double)Kb[(long long)i * q + j];
        const double quad = quad0 <= 0 ? TAU : quad0;
        double ai = ai0, aj = aj0;
        if (yi != yj) {
            double delta = (-Gi - Gj) / quad, diff = ai - aj;
            ai += delta; aj += delta;
            if (diff > 0) { if (aj < 0) { aj = 0.0; ai = diff; } }
            else if (ai < 0) { ai = 0.0; aj = -diff; }
            if (diff > Ci - Cj) { if (ai > Ci) { ai = Ci; aj = Ci - diff; } }
            else if (aj > Cj) { aj = Cj; ai = Cj + diff; }
        } else {
            double delta = (Gi - Gj) / quad, s = ai + aj;
            ai -= delta; aj += delta;
            if (s > Ci) { if (ai > Ci) { ai = Ci; aj = s - Ci; } }
            else if (aj < 0) { aj = 0.0; ai = s; }
            if (s > Cj) { if (aj > Cj) { aj = Cj; ai = s - Cj; } }
            else if (ai < 0) { ai = 0.0; aj = s; }
        }
        const double dai = yi * (ai - ai0), daj = yj * (aj - aj0);
        for (int k = 0; k < PER; k++) {
            int t = tid + k * nt;
            if (t < q) {
                g[k] += yy[k] * ((double)Kb[(long long)i * q + t] * dai + (double)Kb[(long long)j * q + t] * daj);
                if (t == i) a[k] = ai;
                if (t == j) a[k] = aj;
            }
        }
        it++;
        if (ai > limit || aj > limit) break;
    }
    for (int k = 0; k < PER; k++) {
        int t = tid + k * nt;
        if (t < q) { alpha[t] = a[k]; G[t] = g[k]; }
    }
    if (tid == 0) n_iter[0] = it;
}

// G_j += y_j Σ_b coef_b K(b, kidx_j): the rows of the moved variables are rows pos[b] of store.
extern "C" __global__ void add_rows(double* G, const float* __restrict__ store, const long long n_cols,
                                    const long long* __restrict__ pos, const double* __restrict__ coef,
                                    const int nb, const long long* __restrict__ kidx,
                                    const double* __restrict__ y, const long long m) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    const long long c = kidx[j];
    double acc = 0.0;
    for (int b = 0; b < nb; b++) acc += coef[b] * (double)store[pos[b] * n_cols + c];
    G[j] += y[j] * acc;
}
"""


#: NVRTC's options for the kernels.
NVRTC_OPTIONS = ("-std=c++14",)


def per_variants(threads: int | None = None) -> tuple[int, ...]:
    """The block kernel's variants for blocks of `threads` threads (default BLOCK_THREADS): the
    variables each thread holds, a power of two (a block of q variables takes the least PER
    with q ≤ PER · threads)."""
    return tuple(1 << k for k in range(int(np.log2(MOST_VARIABLES // (threads or BLOCK_THREADS))) + 1))


def source(per: int) -> str:
    """The CUDA source of the kernels, `per` variables a thread."""
    return _SOURCE.replace("__PER__", str(per))


@functools.lru_cache(maxsize=None)
def _kernels(per: int):
    import cupy

    module = cupy.RawModule(code=source(per), options=NVRTC_OPTIONS)
    return module.get_function("smo_block"), module.get_function("add_rows")


def _device(a, dtype):
    import cupy

    return cupy.ascontiguousarray(cupy.asarray(a, dtype=dtype))


def compile_kernels():
    """Compile every variant of the kernels now (CuPy keeps them on disk), so that no fit
    pays for compilation."""
    for per in per_variants():
        _kernels(per)


def inner_smo(block: Block, settings: InnerSettings) -> int:
    """`_loops.inner_smo` on the device (the block's arrays CuPy's; `pos` may be on the
    host): SMO with second-order selection on the block's q variables in one thread block, from
    the q × q kernel block gathered first, with a Newton step on the free variables after every
    NEWTON_EVERY pair updates that did not reach `settings.eps` (none when a bound is infinite:
    the unbounded-dual test reads the pair updates). The settings' `scratch`, `shrinking` and
    `stop` are the host loop's and unused here. Updates `block.alpha` and `block.G` (contiguous
    float64) in place; returns the pair updates."""
    import cupy

    q = block.size
    alpha, G, nu_mode = block.alpha, block.G, settings.nu_mode
    pos_d, kidx_d = _device(block.pos, np.int64), _device(block.kidx, np.int64)
    Kb = cupy.ascontiguousarray(block.store[pos_d[:, None], kidx_d[None, :]])
    threads = min(BLOCK_THREADS, 32 * -(-q // 32))
    per = 1 << max(0, int(np.ceil(np.log2(-(-q // threads)))))
    n_iter = cupy.zeros(1, dtype=np.int64)
    smo_block, _ = _kernels(per)
    y_d, U_d, QD_d = _device(block.y, np.float64), _device(block.U, np.float64), _device(block.QD, np.float64)

    def pair_updates(cap):
        smo_block((1,), (threads,), (Kb, y_d, alpha, G, U_d, QD_d, np.int32(q), np.float64(settings.eps),
                                     np.int64(cap), np.int32(bool(nu_mode)), np.float64(settings.limit), n_iter))
        return int(n_iter[0])

    newton = NEWTON_EVERY > 0 and not bool(cupy.isinf(U_d).any())
    return alternate(pair_updates, lambda: newton_step(cupy, Kb, y_d, alpha, G, U_d, nu_mode),
                     min(settings.max_iter, np.iinfo(np.int64).max), NEWTON_EVERY if newton else 0)


def alternate(pair_updates, newton, budget: int, every: int) -> int:
    """Run `pair_updates(cap)` (pair updates until the block's tolerance, at most cap; returns
    how many) in chunks of `every` (0: one run to the end), with `newton()` (whether it moved)
    between two chunks that used their whole cap, until a chunk stops short or `budget` pair
    updates are spent. A Newton step that moves nothing (too few free variables, or a free set
    about to change) doubles the chunk before the next. Returns the pair updates."""
    done = 0
    while True:
        cap = budget - done if every <= 0 else min(every, budget - done)
        ran = pair_updates(cap)
        done += ran
        if ran < cap or done >= budget:
            return done
        if not newton():
            every *= 2


def newton_step(xp, Kb, y, alpha, G, U, nu_mode) -> bool:
    """One Newton step on the block's free variables F (0 < α_F < U_F), the others held: the
    minimiser d of ½dᵀQ_FF d + G_Fᵀd under A d = 0 (A = y_Fᵀ, or in ν mode the indicator of
    each class), from Q_FF [u, W] = [−G_F, Aᵀ]: d = u − Wλ, (AW)λ = Au; then α_F += t·d with
    the largest t ≤ 1 that stays in the box (the variable that stops it set on its bound).
    Kb: the block's kernel (q × q, float32); alpha, G updated in place (G = Qα + p over the
    block), arrays of `xp`. Taken only when it lowers the objective; returns whether it moved."""
    free = xp.flatnonzero((alpha > 0) & (alpha < U))
    k = int(free.size)
    if k < 2 or k > NEWTON_MAX_FREE:
        return False
    yF = y[free]
    Q = Kb[free[:, None], free[None, :]].astype(np.float64)
    Q *= yF[:, None]
    Q *= yF[None, :]
    gF = G[free]
    # in ν mode a class with no free variable keeps its sum without a constraint here
    A = xp.stack([c for c in (yF > 0, yF < 0) if bool(c.any())], axis=1).astype(np.float64) if nu_mode \
        else yF[:, None]
    try:
        solved = CholeskyShift(Q.copy(), NEWTON_JITTER * float(xp.max(xp.diagonal(Q))), xp).solve(
            xp.concatenate([-gF[:, None], A], axis=1))
    except NotPositiveDefiniteError:
        return False
    u, W = solved[:, 0], solved[:, 1:]
    try:
        lam = np.linalg.solve(to_host(A.T @ W), to_host(A.T @ u))
    except np.linalg.LinAlgError:
        return False
    d = u - W @ xp.asarray(lam)
    aF, UF = alpha[free], U[free]
    # the largest step along d in the box: (U − α)/d where d > 0, α/(−d) where d < 0
    room = xp.where(d > 0, (UF - aF) / xp.where(d > 0, d, 1.0), xp.where(d < 0, aF / xp.where(d < 0, -d, 1.0), xp.inf))
    t = min(1.0, float(xp.min(room)))
    if not t > 0:
        return False
    moved = xp.clip(aF + t * d, 0.0, UF)
    if t < 1.0:
        stop = int(xp.argmin(room))
        moved[stop] = UF[stop] if float(d[stop]) > 0 else 0.0
    delta = moved - aF
    if not float(gF @ delta + 0.5 * (delta @ (Q @ delta))) < 0:
        return False
    alpha[free] = moved
    G += y * (Kb[:, free].astype(np.float64) @ (yF * delta))
    return True


class BlockRows:
    """A block's rows as the row source keeps them: the device's block solve takes Q_BB whole
    (the host's copy, `_loops.BlockRows`, spares its gathers from full-width rows), so a
    block's rows are held at once."""

    holds_blocks = False

    def __init__(self, n: int, capacity: int):
        pass

    @staticmethod
    def take(ws, store, pos, cols):
        return store, pos, cols

    def release(self) -> None:
        pass


def update_gradient(G, store, pos, coef, kidx, y):
    """`_loops.update_gradient` on the device: G_j += y_j Σ_b coef_b K(b, kidx_j) for every
    variable j, coef_b = y_b Δα_b, reading the rows `pos` of `store` in place."""
    m = int(G.shape[0])
    if m == 0 or np.size(pos) == 0:
        return
    _, add_rows = _kernels(1)
    blocks = -(-m // UPDATE_THREADS)
    add_rows((blocks,), (UPDATE_THREADS,), (G, store, np.int64(store.shape[1]), _device(pos, np.int64),
                                             _device(coef, np.float64), np.int32(np.size(pos)),
                                             _device(kidx, np.int64), _device(y, np.float64), np.int64(m)))
