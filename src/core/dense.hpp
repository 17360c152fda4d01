// The closed-form models' dense solves: what the packed storage and the RFP solves share.
#pragma once

#include "common.hpp"

namespace svmkit {

// LAPACK's lower RFP layout with TRANSR='N' for order n: e = 1 for even n; the first k columns
// of the triangle are stored as columns of an ld-row Fortran array, the rest transposed in its
// upper part. Column q, rows p ≥ q: at p + e + q·ld for q < k, else at (q − k) + (p − k + 1 − e)·ld.
struct RfpLayout {
    i64 e, k, ld;
};

inline RfpLayout rfp_layout(i64 n) {
    const i64 e = 1 - n % 2;
    return {e, (n + 1 - e) / 2, n + e};
}

// Entries of a triangle of order n: the length of its packed and RFP arrays.
inline i64 triangle_size(i64 n) { return n * (n + 1) / 2; }

void register_dense_rfp(nb::module_ m);

}  // namespace svmkit
