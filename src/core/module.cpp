// svmkit._core: the compiled loops of every solver, one submodule per family.
#include "common.hpp"

NB_MODULE(_core, m) {
    m.doc() = "svmkit's compiled core: SMO, kernel transforms, LIBLINEAR's solvers, dense solves.";
    svmkit::load_blas();
    svmkit::register_threads(m);
    svmkit::register_smo(m.def_submodule("smo", "The SMO block solver and the gradient update."));
    svmkit::register_kernels(m.def_submodule("kernels", "Kernel transforms of inner-product blocks, sparse scatter."));
    svmkit::register_linear(m.def_submodule("linear", "LIBLINEAR's solvers: dual CD, primal Newton pieces, -s 5, Crammer-Singer."));
    svmkit::register_dense(m.def_submodule("dense", "Packed and RFP solves of the closed-form models."));
    svmkit::register_ovo(m.def_submodule("ovo", "One-vs-one decision values and votes of many class pairs."));
    svmkit::register_shapley(m.def_submodule("shapley", "Exact Shapley values of RBF expansions."));
}
