"""Layer 3: the estimators and the fit session they share. Each builds its problem, calls the
solver, reads α and b back; imports the backend, solvers, kernels, the execution layer and the
shared helpers, never model_selection, io or cli."""

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
