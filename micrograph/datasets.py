"""Small data sets: Iris and Wine shipped with the package, two moons and circles generated from a seed.

Every loader returns ``(X, y)``: X a list of n examples, each a list of floats; y a list of n integer
class labels 0..k-1. :func:`split` makes a seeded train/test split and :func:`standardize` rescales the
features with the training set's mean and standard deviation only.

No network access and no scikit-learn: the two CSV files live in ``micrograph/data/`` (read with
``importlib.resources``), and :func:`moons` / :func:`circles` follow scikit-learn's ``make_moons`` /
``make_circles`` recipes with Python's ``random.Random``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 5.3 (training and test sets)
and section 8.7.1 (normalising inputs).
"""

from __future__ import annotations

import inspect
import math
import numbers
import random
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, overload

__all__ = ["DataFileError", "circles", "iris", "load_csv", "moons", "split", "standardize", "wine"]

Data = tuple[list[list[float]], list[int]]


class DataFileError(ValueError):
    """A data file is malformed: the message names the file and the line.

    Attributes:
        path (str): the file. line (int): the 1-based line number (0 when the file as a whole is wrong).
    """

    def __init__(self, path: str, line: int, message: str) -> None:
        where = f"{path}, line {line}" if line else path
        super().__init__(f"{where}: {message}")
        self.path, self.line = path, line


def load_csv(path: str | Path) -> tuple[Data, list[str]]:
    """Read a data file in scikit-learn's layout: a header ``n_samples,n_features,class names...``, then one
    example per line, the features first and the class index last.

    Args:
        path: the file.

    Returns:
        ``((X, y), class_names)``.

    Raises:
        FileNotFoundError: if the file does not exist (the message names it).
        DataFileError: (a ValueError) if the file is not UTF-8 text (a byte-order mark is fine), the header or
            a line is malformed, a number does not parse or is not finite, a class index is not a number or is
            out of range, or the line count differs from the header's; the message names the file and line.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark is allowed, and skipped
    except FileNotFoundError:
        raise FileNotFoundError(f"data file not found: {name}") from None
    except UnicodeDecodeError as e:
        line = Path(path).read_bytes()[: e.start].count(b"\n") + 1
        byte = e.object[e.start]
        raise DataFileError(name, line, f"the file is not UTF-8 text (byte {byte:#04x})") from None
    return _parse_csv(text, name)


def _parse_csv(text: str, name: str) -> tuple[Data, list[str]]:
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise DataFileError(name, 1, "empty file: expected a header 'n_samples,n_features,class names...'")
    head = [f.strip() for f in lines[0].split(",")]
    try:
        n_samples, n_features = int(head[0]), int(head[1])
    except (ValueError, IndexError):
        raise DataFileError(
            name, 1, f"the header must start with n_samples,n_features (integers), got {lines[0]!r}"
        ) from None
    classes = head[2:]
    if n_samples < 1 or n_features < 1 or not classes:
        raise DataFileError(
            name, 1, f"the header needs n_samples >= 1, n_features >= 1, class names: {lines[0]!r}"
        )
    X: list[list[float]] = []
    y: list[int] = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != n_features + 1:
            raise DataFileError(
                name, lineno, f"expected {n_features + 1} comma-separated fields, got {len(fields)}: {line!r}"
            )
        try:
            row = [float(f) for f in fields[:-1]]
        except ValueError:
            raise DataFileError(name, lineno, f"a feature is not a number: {line!r}") from None
        if not all(math.isfinite(v) for v in row):
            raise DataFileError(name, lineno, f"a feature is not finite: {line!r}")
        label = fields[-1].strip()
        if not label.isdigit() or int(label) >= len(classes):
            raise DataFileError(name, lineno, f"the class index must be 0..{len(classes) - 1}, got {label!r}")
        X.append(row)
        y.append(int(label))
    if len(X) != n_samples:
        raise DataFileError(name, 0, f"the header announces {n_samples} samples, the file has {len(X)}")
    return (X, y), classes


def _packaged(filename: str, path: str | Path | None) -> Data:
    if path is not None:
        return load_csv(path)[0]
    resource = resources.files("micrograph").joinpath("data").joinpath(filename)
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"data file not found: {resource} (micrograph/data/{filename} should ship with the package)"
        ) from None
    return _parse_csv(text, str(resource))[0]


# The docstring's Args, Returns and Raises sections: _document_reader, below.
def iris(*, path: str | Path | None = None) -> Data:
    """Fisher's Iris data: 150 flowers, 4 features in cm, 3 species (50 each).

    Features: sepal length, sepal width, petal length, petal width (cm). Classes: 0 setosa, 1 versicolor,
    2 virginica. The copy is scikit-learn's (BSD-3-Clause distribution), which follows the R version of
    the data (correcting two points of the UCI copy).

    Origin: R. A. Fisher (1936), "The use of multiple measurements in taxonomic problems", Annals of
    Eugenics 7(2), 179-188.
    """
    return _packaged("iris.csv", path)


# The docstring's Args, Returns and Raises sections: _document_reader, below.
def wine(*, path: str | Path | None = None) -> Data:
    """The Wine recognition data: 178 wines, 13 chemical measurements, 3 cultivars (59, 71, 48).

    Features: alcohol, malic acid, ash, alcalinity of ash, magnesium, total phenols, flavanoids,
    nonflavanoid phenols, proanthocyanins, colour intensity, hue, OD280/OD315 of diluted wines, proline.
    Their scales differ by three orders of magnitude: standardise them (:func:`standardize`) before
    training. The copy is scikit-learn's (BSD-3-Clause distribution).

    Origin: M. Forina et al. (1988), PARVUS - An Extendible Package for Data Exploration, Classification
    and Correlation, Institute of Pharmaceutical and Food Analysis and Technologies, Genoa; via the UCI
    Machine Learning Repository, "Wine" data set.
    """
    return _packaged("wine_data.csv", path)


def _document_reader(reader: Callable[..., Data], filename: str, shapes: str) -> None:
    """Ends a packaged data set's reader's docstring with the sections every reader shares, written once:
    its argument, what it returns (``shapes``: the sizes of X and y) and its errors.

    The docstring is cleaned first (:func:`inspect.cleandoc`: Python 3.13 stores it dedented, earlier
    versions as written), so the sections join it at the same indentation on every version.
    """
    reader.__doc__ = (
        f"{inspect.cleandoc(reader.__doc__ or '')}\n\n"
        "Args:\n"
        f"    path: read this file instead of the packaged ``micrograph/data/{filename}`` (same layout).\n\n"
        "Returns:\n"
        f"    (X, y): {shapes}.\n\n"
        "Raises:\n"
        "    FileNotFoundError, DataFileError: see :func:`load_csv`.\n"
    )


_document_reader(iris, "iris.csv", "X 150 x 4 floats, y 150 labels in 0..2")
_document_reader(wine, "wine_data.csv", "X 178 x 13 floats, y 178 labels in 0..2")


def _check_n(n: Any, noise: Any, where: str) -> tuple[int, float]:
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 2:
        raise ValueError(f"{where}: n must be an integer >= 2, got {n!r}")
    if (
        not isinstance(noise, numbers.Real)
        or isinstance(noise, bool)
        or not (math.isfinite(noise) and float(noise) >= 0)
    ):
        raise ValueError(f"{where}: noise must be a finite number >= 0, got {noise!r}")
    return int(n), float(noise)


def _finish(points: list[tuple[float, float, int]], noise: float, rng: random.Random) -> Data:
    X = [[x + rng.gauss(0.0, noise), y + rng.gauss(0.0, noise)] if noise else [x, y] for x, y, _ in points]
    y = [c for _, _, c in points]
    order = list(range(len(X)))
    rng.shuffle(order)
    return [X[i] for i in order], [y[i] for i in order]


def moons(n: int = 100, noise: float = 0.1, seed: int | None = 0) -> Data:
    """Two interleaving half circles ("two moons"), generated from a seed: a non-linear binary problem.

    scikit-learn's ``make_moons`` recipe: n // 2 points of the outer moon (cos t, sin t), t evenly in
    [0, pi], class 0; the rest on the inner moon (1 - cos t, 1/2 - sin t), class 1; Gaussian noise of
    standard deviation ``noise`` on both coordinates; the examples shuffled.

    Args:
        n: the number of points, >= 2. noise: the noise's standard deviation, >= 0.
        seed: the seed of a private ``random.Random`` (the global generator is untouched).

    Returns:
        (X, y): X n x 2 floats, y n labels in {0, 1} (micrograd's demo uses ``y * 2 - 1``).

    Raises:
        ValueError: for n < 2 or a negative noise.
    """
    n, noise = _check_n(n, noise, "moons()")
    n_out = n // 2
    n_in = n - n_out
    points = [(math.cos(t), math.sin(t), 0) for t in _linspace(0.0, math.pi, n_out)]
    points += [(1.0 - math.cos(t), 0.5 - math.sin(t), 1) for t in _linspace(0.0, math.pi, n_in)]
    return _finish(points, noise, random.Random(seed))


def circles(n: int = 100, noise: float = 0.05, factor: float = 0.5, seed: int | None = 0) -> Data:
    """Two concentric circles, generated from a seed: a binary problem no line can separate.

    scikit-learn's ``make_circles`` recipe: n // 2 points evenly on the unit circle, class 0; the rest on a
    circle of radius ``factor``, class 1; Gaussian noise of standard deviation ``noise``; shuffled.

    Args:
        n: the number of points, >= 2. noise: the noise's standard deviation, >= 0.
        factor: the inner radius relative to the outer one, 0 < factor < 1.
        seed: the seed of a private ``random.Random``.

    Returns:
        (X, y): X n x 2 floats, y n labels in {0, 1}.

    Raises:
        ValueError: for n < 2, a negative noise, or a factor outside (0, 1).
    """
    n, noise = _check_n(n, noise, "circles()")
    if not isinstance(factor, numbers.Real) or isinstance(factor, bool) or not 0.0 < factor < 1.0:
        raise ValueError(f"circles(): factor must be a number in (0, 1), got {factor!r}")
    n_out = n // 2
    n_in = n - n_out
    points = [(math.cos(t), math.sin(t), 0) for t in _linspace(0.0, 2 * math.pi, n_out, endpoint=False)]
    points += [
        (factor * math.cos(t), factor * math.sin(t), 1)
        for t in _linspace(0.0, 2 * math.pi, n_in, endpoint=False)
    ]
    return _finish(points, noise, random.Random(seed))


def _linspace(a: float, b: float, n: int, endpoint: bool = True) -> list[float]:
    if n == 1:
        return [a]
    d = (b - a) / (n - 1 if endpoint else n)
    return [a + i * d for i in range(n)]


def _pair(data: Any, where: str) -> tuple[Any, Any]:
    """(X, y) from a pair; a TypeError that says so for anything else (a bare X, say)."""
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence) or len(data) != 2:
        raise TypeError(
            f"{where}: expected a pair (X, y) of feature rows and labels, got {type(data).__name__}"
            + (f" of length {len(data)}" if isinstance(data, Sequence) else "")
        )
    first = data[0]
    if isinstance(first, Sequence) and first and isinstance(first[0], numbers.Real):
        raise TypeError(
            f"{where}: expected a pair (X, y) of feature rows and labels; this looks like X alone "
            f"(its first element is a row of numbers, {list(first)!r})"
        )
    return data[0], data[1]


def _check_xy(X: Any, y: Any, where: str) -> tuple[list[list[float]], list[Any]]:
    try:
        rows, labels = [list(map(float, x)) for x in X], list(y)
    except (TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"{where}: X must be rows of numbers and y a sequence of labels ({e})") from None
    for i, r in enumerate(rows):
        if not all(math.isfinite(v) for v in r):
            raise ValueError(f"{where}: example {i} has a feature that is not finite: {r!r}")
    if not rows:
        raise ValueError(f"{where}: X is empty (0 examples)")
    if len(rows) != len(labels):
        raise ValueError(f"{where}: X has {len(rows)} examples but y has {len(labels)} labels")
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"{where}: example {i} has {len(r)} features, example 0 has {width}")
    return rows, labels


def split(
    X: Sequence[Sequence[float]], y: Sequence[Any], test_fraction: float = 0.3, seed: int | None = 0
) -> tuple[tuple[list[list[float]], list[Any]], tuple[list[list[float]], list[Any]]]:
    """A seeded random split into a training set and a held-out test set.

    Args:
        X: n examples (rows of numbers). y: n labels.
        test_fraction: the share of examples held out, 0 < test_fraction < 1; the test set has
            round(n * test_fraction) examples, at least 1, and the training set at least 1.
        seed: the seed of a private ``random.Random``.

    Returns:
        ``((X_train, y_train), (X_test, y_test))`` (new lists; the inputs are not changed).

    Raises:
        ValueError: for empty data, X and y of different lengths, fewer than 2 examples, or a
            test_fraction outside (0, 1).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 5.3.
    """
    rows, labels = _check_xy(X, y, "split(X, y)")
    if (
        not isinstance(test_fraction, numbers.Real)
        or isinstance(test_fraction, bool)
        or not 0 < test_fraction < 1
    ):
        raise ValueError(f"split(test_fraction=...): must be a number in (0, 1), got {test_fraction!r}")
    n = len(rows)
    if n < 2:
        raise ValueError(f"split(X, y): needs at least 2 examples to split, got {n}")
    n_test = min(max(round(n * test_fraction), 1), n - 1)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    test, train = order[:n_test], order[n_test:]
    return ([rows[i] for i in train], [labels[i] for i in train]), (
        [rows[i] for i in test],
        [labels[i] for i in test],
    )


Pair = tuple[Sequence[Sequence[float]], Sequence[Any]]
Split = tuple[list[list[float]], list[Any]]


@overload
def standardize(train: Pair, test: Pair) -> tuple[Split, Split]: ...
@overload
def standardize(train: Pair, test: None = None) -> Split: ...
def standardize(train: Pair, test: Pair | None = None) -> tuple[Split, Split] | Split:
    """Rescale every feature to mean 0 and standard deviation 1 using the training set's statistics only.

    x' = (x - mean_train) / std_train for both sets, so nothing about the test set leaks into training.
    A feature that is constant on the training set is only centred (its std is taken as 1).

    Args:
        train: (X, y) of the training set. test: (X, y) of the held-out set, or None.

    Returns:
        ``(train, test)`` as new (X, y) pairs (labels unchanged); just ``train`` when test is None.

    Raises:
        TypeError: if ``train`` or ``test`` is not a pair (X, y) (a bare X, say).
        ValueError: for empty data, rows of different lengths, a feature that is not finite (NaN, inf), or a
            test set with another feature count.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 8.7.1 and section 12.2.1.1
    (contrast normalisation).
    """
    X, y = _check_xy(*_pair(train, "standardize(train)"), "standardize(train)")
    d = len(X[0])
    n = len(X)
    mean = [sum(r[j] for r in X) / n for j in range(d)]
    std = [math.sqrt(sum((r[j] - mean[j]) ** 2 for r in X) / n) for j in range(d)]
    std = [s if s > 0 else 1.0 for s in std]

    def scale(rows: list[list[float]]) -> list[list[float]]:
        return [[(r[j] - mean[j]) / std[j] for j in range(d)] for r in rows]

    out_train: Split = (scale(X), y)
    if test is None:
        return out_train
    Xt, yt = _check_xy(*_pair(test, "standardize(test)"), "standardize(test)")
    if len(Xt[0]) != d:
        raise ValueError(f"standardize(train, test): train has {d} features, test has {len(Xt[0])}")
    return out_train, (scale(Xt), yt)
