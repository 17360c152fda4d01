"""
Platt's calibrated SVM against kernel logistic regression
=========================================================

An SVM's decision value is not a probability. Platt (1999) fits a sigmoid
:math:`P(y = 1 \\mid f) = 1 / (1 + \\exp(A f + B))` to held-out decision values (an internal
5-fold cross-validation), with the robust Newton method of Lin, Lin & Weng (2007); for more
classes the pairwise probabilities are coupled by the method of Wu, Lin & Weng (2004), as
LIBSVM does. Kernel logistic regression (Zhu & Hastie 2005) instead minimises the logistic
loss directly and gives probabilities with every training point as an expansion term.
The reliability diagrams compare both on held-out data; the Brier score is in each legend.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import svmkit
from svmkit import plot

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)

svc = svmkit.SVC(C=1.0, gamma="scale", probability=True, random_state=0).fit(X_train, y_train)
klr = svmkit.KernelLogisticRegression(C=1.0, gamma="scale").fit(X_train, y_train)

fig, axes = plt.subplots(1, 3, figsize=(15, 4.3), layout="constrained")
plot.calibration(svc, X_test, y_test, ax=axes[0])
axes[0].set_title("SVC + Platt's sigmoid")
plot.calibration(klr, X_test, y_test, ax=axes[1])
axes[1].set_title("kernel logistic regression")

f = svc.decision_function(X_test)
order = np.argsort(f)
axes[2].plot(f[order], svc.predict_proba(X_test)[order, 1], label="Platt: P(y = 1 | f)")
axes[2].scatter(f, klr.predict_proba(X_test)[:, 1], s=8, c="C1", label="KLR's P at the same points")
axes[2].set_xlabel("SVC decision value f(x)")
axes[2].set_ylabel("P(y = 1)")
axes[2].legend(fontsize="small")
print(f"Platt's sigmoid: A = {svc.probA_[0]:.4f}, B = {svc.probB_[0]:.4f}")
for name, model in (("SVC + Platt", svc), ("KLR", klr)):
    p = model.predict_proba(X_test)[:, 1]
    print(f"{name:12s} test accuracy {model.score(X_test, y_test):.3f}, Brier {np.mean((p - y_test) ** 2):.4f}")
plt.show()
