"""Where a fit runs, kept out of the models' mathematics: one `Options` object an estimator
takes as its `options` parameter (after Falkon's FalkonOptions), and the checks of its fields."""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

from svmkit._validation import check_choice
from svmkit.parallel.cluster import check_scheduler_address

#: The devices a model runs on.
DEVICES = ("cpu", "cuda")
#: How the Dask cascade's partitions are made.
PARTITIONINGS = ("rows", "kmeans")


def check_max_rounds(value, name="max_rounds"):
    """None, or a number of rounds ≥ 0."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0):
        raise ValueError(f"{name} must be None or an integer ≥ 0, got {name}={value!r}")
    return value


@dataclass(frozen=True)
class Options:
    """The execution settings of a model: where its fit and prediction run, not what they compute.

    Parameters
    ----------
    device : {'cpu', 'cuda'}, default 'cpu'
        'cuda' computes the kernel blocks of fit and prediction on an NVIDIA GPU (CuPy, the `gpu`
        extra), and runs the SMO loops or the factorisations there; every fitted attribute is a
        NumPy array, as on the CPU. A precomputed kernel matrix is copied there (float32 for SMO,
        float64 for the closed-form models); a callable kernel is called on the host and its
        values copied there, unless it is wrapped in `svmkit.OnDevice`, which is handed CuPy
        arrays.
    scheduler_address : str or None, default None
        A Dask X (array or dataframe) and y are fitted on the cluster whose scheduler is at this
        address ('tcp://host:port'); None: the active `distributed.Client`, else a LocalCluster of
        two worker processes started for the fit. In-memory data ignores it.
    max_rounds : int or None, default None
        SVC and SVR on a Dask X: rounds of the cascade's global optimality check at most (None:
        until no variable violates the optimality conditions at `tol`, the in-memory fit's
        optimum); 0 stops at the root of the cascade's tree, an early model for very large data.
    partitioning : {'rows', 'kmeans'}, default 'rows'
        SVC and SVR on a Dask X: the cascade's partitions are X's own ('rows'), or as many made by
        kernel k-means on a sample (DC-SVM, Hsieh, Si & Dhillon 2014).

    Each estimator reads the fields its docstring names; a field it does not read must keep its
    default (fit raises a ValueError naming the field and the estimator otherwise).

    Examples
    --------
    >>> import svmkit
    >>> svmkit.SVC(options=svmkit.Options(device="cpu", max_rounds=2)).options.max_rounds
    2
    """

    device: str = "cpu"
    scheduler_address: str | None = None
    max_rounds: int | None = None
    partitioning: str = "rows"

    def check(self) -> Options:
        """Raise a ValueError naming the first field that is not valid; return self."""
        check_choice(self.device, "options.device", DEVICES)
        check_scheduler_address(self.scheduler_address, "options.scheduler_address")
        check_max_rounds(self.max_rounds, "options.max_rounds")
        check_choice(self.partitioning, "options.partitioning", PARTITIONINGS)
        return self

    def changed(self) -> dict:
        """The fields that differ from their defaults, by name."""
        default = Options()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}


#: The names of Options' fields (the parameters they replaced).
FIELDS = tuple(f.name for f in dataclasses.fields(Options))


def options_of(est) -> Options:
    """The options of estimator `est`: its `options` parameter, Options() where that is None or
    the estimator has none."""
    return getattr(est, "options", None) or Options()


def reads(owner, *fields):
    """The constraint on the `options` parameter of estimator `owner`, which reads `fields`:
    None or an Options whose fields are valid, those `owner` does not read at their defaults."""

    def check(value, name="options"):
        if value is None:
            return value
        if not isinstance(value, Options):
            raise ValueError(f"{name} must be None or an svmkit.Options, got {name}={value!r}")
        for field, setting in value.check().changed().items():
            if field not in fields:
                raise ValueError(f"{owner} does not use {name}.{field}, got {name}.{field}={setting!r}; it reads "
                                 f"{', '.join(f'{name}.{f}' for f in fields)}")
        return value

    return check
