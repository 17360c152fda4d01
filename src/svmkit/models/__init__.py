"""Layer 3: the estimators, by family — `smo` (the models of LIBSVM's SMO), `dense` (kernel
ridge, LS-SVM, kernel logistic regression), `linear` (LIBLINEAR's), `band` — and what they share:
the kernel expansion and its fit session (`expansion`), fits that share a session (`session`),
the state of the wᵀx + b models (`plain_state`). Each builds its problem, calls the solver, reads
α and b back; imports the backend, solvers, kernels, the execution layer and the shared helpers,
never model_selection, io or cli. Its public names are the models of svmkit.registry, each
imported from its module on first use."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
