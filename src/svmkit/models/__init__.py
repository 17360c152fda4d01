"""Layer 3: the estimators. Each builds its dual problem, calls the solver, reads α and b back;
imports solvers, kernels and the shared helpers, never io, selection or cli."""

from svmkit.models.klr import KernelLogisticRegression
from svmkit.models.linear import LinearSVC, LinearSVR
from svmkit.models.lssvm import LSSVC, LSSVR
from svmkit.models.nusvc import NuSVC
from svmkit.models.one_class import OneClassSVM
from svmkit.models.ridge import KernelRidge
from svmkit.models.svc import SVC
from svmkit.models.svr import SVR, NuSVR

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "KernelRidge", "LSSVR", "LSSVC",
           "KernelLogisticRegression", "LinearSVC", "LinearSVR"]
