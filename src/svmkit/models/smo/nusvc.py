"""ν-support vector classification (Schölkopf et al. 2000), one-vs-one, solved as LIBSVM does.

Each class pair solves min ½ αᵀQα s.t. yᵀα = 0, Σα = ν Σw, 0 ≤ α_i ≤ w_i with the solver's ν
mode (selection within each class, two thresholds r1, r2); dividing α and ρ by r = (r1 + r2)/2
gives the C-SVC solution for C = 1/r, which is what prediction uses. The bounds w_i are the
sample weights: class weights scale C, which ν-SVC has none of, so LIBSVM (solve_nu_svc) and
scikit-learn's NuSVC ignore them, and so does this one.
"""

from __future__ import annotations

from svmkit._validation import check_nu, store_parameters
from svmkit.models.smo import formulations
from svmkit.models.smo.svc import BaseSVC
from svmkit.options import reads


class NuSVC(BaseSVC):
    """ν-SVC, scikit-learn compatible, exact against LIBSVM (-s 1).

    Each class pair solves min ½ αᵀQα, yᵀα = 0, Σα = ν Σw, 0 ≤ α_i ≤ w_i (Schölkopf et al.
    2000); dividing α and ρ by r gives the C-SVC solution for C = 1/r.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of margin errors, lower bound on the fraction of support
        vectors. Infeasible when ν (n_a + n_b)/2 > min(n_a, n_b) (weighted counts) for a pair:
        fit then raises "specified nu is infeasible" naming the pair.
    class_weight : dict, 'balanced' or None
        Ignored, with a warning, as by scikit-learn's NuSVC and LIBSVM's `svm-train -s 1 -w`
        (class weights scale C, and ν-SVC has no C); `class_weight_` holds the weights, as
        scikit-learn's does. For a weighted ν-SVC pass each row's class weight as
        `sample_weight`, which scales its bound w_i.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start, keep_data :
        As for `SVC`.
    options : Options or None, default None
        `svmkit.Options`; reads device only.
    probability, decision_function_shape, break_ties, random_state :
        As for `SVC`; a calibration fold's pair is a ν-SVC with the same ν, which must be
        feasible on the fold as on the whole pair.

    Attributes
    ----------
    As `SVC`'s.

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> model = svmkit.NuSVC(nu=0.1).fit(*load_iris(return_X_y=True))
    >>> model.n_support_.tolist()  # at least ν of each pair's rows are support vectors
    [8, 11, 10]
    """

    _formulation = formulations.NuSVCPairs
    _constraints = {**BaseSVC._constraints, "nu": check_nu, "options": reads("NuSVC", "device")}

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=1024, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())
