"""Issue 53's input classes from the independent fuzzing pass: pandas' nullable, sparse and
categorical columns, text columns, non-canonical CSR matrices, labels of mixed types and
callable kernels that are not symmetric or return sparse matrices. Each ends in the result of
the same data as plain floats, or a ValueError naming the input."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import svmkit
from svmkit.models.band import HardBandSVR

pd = pytest.importorskip("pandas")

#: One model of each family of the front door: SMO, closed form, Newton, linear.
MODELS = [svmkit.SVC(), svmkit.KernelRidge(), svmkit.LSSVC(), svmkit.KernelLogisticRegression(),
          svmkit.LinearSVC(random_state=0), svmkit.SVC(kernel=lambda A, B: np.asarray(A) @ np.asarray(B).T)]
MODEL_IDS = ["SVC", "KernelRidge", "LSSVC", "KernelLogisticRegression", "LinearSVC", "SVC(callable)"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    X[:, 0] = np.round(X[:, 0] * 3)  # integers, so an integer column holds the same values
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)


def _fitted(model, X, y):
    return clone(model).fit(X, y).predict(X)


def _frame(X, kind, na=False):
    values = list(X[:, 0])
    if na:
        values[3] = None
    column = {"Int64": lambda: pd.array([None if v is None else int(v) for v in values], dtype="Int64"),
              "Float64": lambda: pd.array(values, dtype="Float64"),
              "boolean": lambda: pd.array([None if v is None else v > 0 for v in values], dtype="boolean"),
              "Sparse": lambda: pd.arrays.SparseArray(np.asarray(values, dtype=float)),
              "category": lambda: pd.Categorical(values)}[kind]()
    return pd.DataFrame({"a": column, "b": X[:, 1]})


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize("kind", ["Int64", "Float64", "boolean", "Sparse", "category"])
def test_pandas_nullable_sparse_and_categorical_columns_fit_as_their_floats(data, model, kind):
    """scikit-learn's check_array converts these columns; so does every front door, a callable
    kernel's included (it gave "Cannot interpret 'Int64Dtype()' as a data type")."""
    X, y = data
    frame = _frame(X, kind)
    floats = pd.DataFrame({"a": np.asarray(frame["a"], dtype=float), "b": X[:, 1]})
    np.testing.assert_array_equal(_fitted(model, frame, y), _fitted(model, floats, y))


@pytest.mark.parametrize("model", MODELS[:5], ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("kind", ["Int64", "Float64", "boolean"])
def test_a_missing_value_of_a_nullable_column_is_named(data, model, kind):
    X, y = data
    with pytest.raises(ValueError, match="Input X contains NaN at row 3, column 0"):
        model.fit(_frame(X, kind, na=True), y)


def test_a_frame_of_sparse_columns_with_fill_value_nan_fits_as_its_dense_twin(data):
    """pandas converts only sparse columns of fill value 0 to a sparse matrix (scikit-learn
    raises 'fill value must be 0'): those of another fill value are made dense."""
    X, y = data
    frame = pd.DataFrame({c: pd.arrays.SparseArray(X[:, j]) for j, c in enumerate("ab")})
    assert frame.dtypes.iloc[0].fill_value != 0
    est = svmkit.SVC().fit(frame, y)
    np.testing.assert_array_equal(est.predict(frame), svmkit.SVC().fit(X, y).predict(X))
    assert list(est.feature_names_in_) == ["a", "b"]
    zero_fill = pd.DataFrame({c: pd.arrays.SparseArray(X[:, j], fill_value=0.0) for j, c in enumerate("ab")})
    np.testing.assert_array_equal(svmkit.SVC().fit(zero_fill, y).predict(zero_fill), est.predict(frame))


@pytest.mark.parametrize("model", MODELS[:5] + [svmkit.LibsvmScaler()], ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("column", [
    lambda v: np.array([str(x) for x in v], dtype=object),
    lambda v: pd.array([str(x) for x in v], dtype="string"),
    lambda v: pd.Categorical([str(x) for x in v]),
    lambda v: np.array([str(x) if i == 5 else x for i, x in enumerate(v)], dtype=object),
], ids=["object", "string", "categorical", "one-string"])
def test_a_column_of_numeric_strings_is_refused_naming_the_column(data, model, column):
    """scikit-learn 1.9 parses such columns silently (its check_array casts to float64); svmkit
    refuses them as it refuses an array of strings, naming the column."""
    X, y = data
    frame = pd.DataFrame({"a": X[:, 1], "text": column(X[:, 0])})
    with pytest.raises(ValueError, match="X column 'text' holds strings"):
        model.fit(frame, y)


def test_an_object_array_of_strings_is_refused_naming_the_column(data):
    X, y = data
    values = X.astype(object)
    values[4, 1] = "0.5"
    with pytest.raises(ValueError, match=r"X column 1 holds strings \(dtype object, e.g. '0.5'\)"):
        svmkit.SVC().fit(values, y)
    np.testing.assert_array_equal(svmkit.SVC().fit(X.astype(object), y).predict(X), svmkit.SVC().fit(X, y).predict(X))


def _non_canonical(X, rng):
    """X as CSR whose every entry is stored twice as two halves, in shuffled column order."""
    indices, values, indptr = [], [], [0]
    for row in X:
        cols = np.tile(np.arange(X.shape[1]), 2)
        vals = np.tile(row / 2, 2)
        order = rng.permutation(cols.size)
        indices += list(cols[order])
        values += list(vals[order])
        indptr.append(len(indices))
    M = sp.csr_matrix((np.array(values), np.array(indices), np.array(indptr)), shape=X.shape)
    assert not M.has_canonical_format
    return M


@pytest.mark.parametrize("model", [svmkit.LinearSVC(random_state=0), svmkit.LinearSVR(random_state=0),
                                   svmkit.LinearSVC(dual=False), svmkit.LinearSVR(dual=False, loss="squared_epsilon_insensitive"),
                                   svmkit.SVC(), svmkit.KernelRidge()], ids=repr)
def test_non_canonical_csr_fits_as_its_canonical_twin_and_is_left_as_given(data, model):
    X, y = data
    target = y if hasattr(model, "predict_proba") or "SVC" in type(model).__name__ else X @ [1.0, -2.0]
    M = _non_canonical(X, np.random.default_rng(1))
    before = (M.data.copy(), M.indices.copy(), M.indptr.copy())
    twin = sp.csr_matrix(X)
    got = clone(model).fit(M, target)
    want = clone(model).fit(twin, target)
    np.testing.assert_array_equal(got.predict(M), want.predict(twin))
    for attr in ("coef_", "dual_coef_"):
        if hasattr(want, attr):
            np.testing.assert_allclose(np.asarray(getattr(got, attr)), np.asarray(getattr(want, attr)), rtol=0, atol=1e-12)
    assert all(np.array_equal(a, b) for a, b in zip(before, (M.data, M.indices, M.indptr)))


@pytest.mark.parametrize("y", [np.array([1, "a"] * 5, dtype=object), pd.Series([1, "a"] * 5),
                               pd.Series(pd.Categorical([1, "a"] * 5)), np.array(["b", None] * 5, dtype=object)],
                         ids=["object", "Series", "Categorical", "None"])
@pytest.mark.parametrize("model", [svmkit.SVC(), svmkit.LinearSVC(), svmkit.LSSVC(), svmkit.KernelLogisticRegression()],
                         ids=lambda m: type(m).__name__)
def test_labels_of_mixed_types_are_refused_at_fit(model, y):
    """As scikit-learn refuses them ('Unknown label type'); a mix with None, which scikit-learn
    fails to sort with a TypeError, names the types too."""
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"Unknown label type: y mixes labels of types"):
        model.fit(X, y)


def test_a_list_of_a_number_and_a_string_is_read_as_strings_as_scikit_learn_reads_it():
    """NumPy makes [1, 'a'] the strings ['1', 'a']: labels of one type, as scikit-learn fits them."""
    X = np.random.default_rng(0).normal(size=(10, 2))
    assert svmkit.SVC().fit(X, [1, "a"] * 5).classes_.tolist() == ["1", "a"]


def _upper_only(A, B):
    """K(A, B) = AᵀB on and above the diagonal, 0 below: not symmetric on (X, X)."""
    return np.triu(np.asarray(A) @ np.asarray(B).T)


@pytest.mark.parametrize("model", [svmkit.SVC(), svmkit.SVR(), svmkit.KernelRidge(), svmkit.KernelLogisticRegression()],
                         ids=lambda m: type(m).__name__)
def test_a_callable_kernel_not_symmetric_on_the_training_rows_is_refused(data, model):
    """As kernel='precomputed' refuses a non-symmetric matrix; SMO would run to its cap."""
    X, y = data
    with pytest.raises(ValueError, match=r"kernel callable _upper_only needs a symmetric training kernel: "
                                         r"K\(X, X\)\[\d+, \d+\] = .* but K\(X, X\)\[\d+, \d+\] = "):
        model.set_params(kernel=_upper_only).fit(X, y)


def test_the_symmetry_of_a_callable_kernel_is_checked_on_a_bounded_sample_of_rows():
    from svmkit.kernels.kinds import SYMMETRY_SAMPLE

    X = np.random.default_rng(0).normal(size=(3 * SYMMETRY_SAMPLE, 2))
    shapes = []

    def kernel(A, B):
        shapes.append((len(A), len(B)))
        return np.asarray(A) @ np.asarray(B).T

    svmkit.SVC(kernel=kernel).fit(X, (X[:, 0] > 0).astype(int))
    assert shapes[0] == (SYMMETRY_SAMPLE, SYMMETRY_SAMPLE)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_a_callable_kernel_returning_a_sparse_matrix_is_densified(data, fmt):
    """As scikit-learn's SVMs densify it."""
    X, y = data

    def sparse_linear(A, B):
        return sp.csr_matrix(np.asarray(A) @ np.asarray(B).T).asformat(fmt)

    got = svmkit.SVC(kernel=sparse_linear).fit(X, y)
    want = svmkit.SVC(kernel="linear").fit(X, y)
    np.testing.assert_allclose(got.decision_function(X), want.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("model", [svmkit.SVR(), HardBandSVR(), svmkit.KernelRidge(), svmkit.LinearSVR()],
                         ids=lambda m: type(m).__name__)
def test_a_regression_target_of_strings_is_refused_as_x_of_strings_is(data, model):
    """NumPy would parse '0.5' (scikit-learn's check for y keeps strings as they are: HardBandSVR
    met them in np.ptp)."""
    X, y = data
    with pytest.raises(ValueError, match=r"y holds strings \(dtype <U"):
        model.fit(X, y.astype(str))


def test_a_search_names_labels_of_mixed_types():
    """Its stratified folds sorted them first, with a TypeError."""
    from svmkit.model_selection import SVMSearchCV

    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.array([0, "a"] * 6, dtype=object)
    with pytest.raises(ValueError, match="Unknown label type: y mixes labels of types int, str"):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, cv=3).fit(X, y)


def test_linear_svc_names_class_weights_of_zero_for_every_class(data):
    with pytest.raises(ValueError, match="class_weight × sample_weight is zero for every sample"):
        svmkit.LinearSVC(class_weight={0: 0.0, 1: 0.0}).fit(*data)


def test_a_numeric_categorical_column_reaches_a_callable_kernel_as_numbers(data):
    """As an Int64 column does: the front door converts it and checks its width at predict."""
    X, y = data
    seen = []

    def kernel(A, B):
        seen.append(type(A))
        return np.asarray(A) @ np.asarray(B).T

    frame = _frame(X, "category")
    model = svmkit.SVC(kernel=kernel).fit(frame, y)
    assert seen[0] is np.ndarray
    with pytest.raises(ValueError, match="X has 3 features, but SVC is expecting 2 features"):
        model.predict(np.hstack([X, X[:, :1]]))
