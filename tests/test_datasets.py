"""Data sets: the shipped Iris and Wine files, generated moons and circles, split, standardize, bad files."""

from __future__ import annotations

import inspect
import math
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from micrograph import datasets
from micrograph.datasets import DataFileError

SHARED = Path("/work/shared/data")


def test_importable_from_the_package():
    from micrograph import datasets as d
    from micrograph import nn

    assert d.iris is datasets.iris and nn.MLP is not None


def test_data_files_ship_inside_the_package():
    data = resources.files("micrograph").joinpath("data")
    assert data.joinpath("iris.csv").is_file() and data.joinpath("wine_data.csv").is_file()


def test_iris_shape_classes_and_first_rows():
    X, y = datasets.iris()
    assert len(X) == len(y) == 150 and all(len(r) == 4 for r in X)
    assert Counter(y) == {0: 50, 1: 50, 2: 50}
    assert X[0] == [5.1, 3.5, 1.4, 0.2] and y[0] == 0
    assert X[-1] == [5.9, 3.0, 5.1, 1.8] and y[-1] == 2
    assert all(isinstance(v, float) for r in X for v in r) and all(isinstance(c, int) for c in y)


def test_wine_shape_and_classes():
    X, y = datasets.wine()
    assert len(X) == 178 and all(len(r) == 13 for r in X)
    assert Counter(y) == {0: 59, 1: 71, 2: 48}
    assert X[0][0] == 14.23 and X[0][12] == 1065.0


@pytest.mark.parametrize(("loader", "file"), [(datasets.iris, "iris.csv"), (datasets.wine, "wine_data.csv")])
def test_help_says_each_shipped_set_s_own_file_and_shape(loader, file):
    """help() shows each loader's path argument, its file, the shape of what it returns and its errors, in
    the Google style Sphinx reads; the shape is the one the file holds."""
    X, y = loader()
    doc = inspect.getdoc(loader)
    assert doc is not None
    head, args = doc.split("\n\nArgs:\n", 1)
    assert head.count("\n\n") >= 1 and "Args:" not in head  # the loader's own description comes first
    assert args == (
        f"    path: read this file instead of the packaged ``micrograph/data/{file}`` (same layout).\n\n"
        f"Returns:\n    (X, y): X {len(X)} x {len(X[0])} floats, y {len(y)} labels in 0..{max(y)}.\n\n"
        "Raises:\n    FileNotFoundError, DataFileError: see :func:`load_csv`."
    )
    assert resources.files("micrograph").joinpath("data").joinpath(file).is_file()


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared data folder is not on this machine")
def test_packaged_copies_equal_the_shared_originals():
    for name, loader in [("iris.csv", datasets.iris), ("wine_data.csv", datasets.wine)]:
        assert loader() == loader(path=SHARED / name)


def test_loaders_take_a_path(tmp_path):
    f = tmp_path / "tiny.csv"
    f.write_text("2,2,a,b\n1.0,2.0,0\n3,4,1\n")
    assert datasets.iris(path=f) == ([[1.0, 2.0], [3.0, 4.0]], [0, 1])
    (_, y), names = datasets.load_csv(f)
    assert names == ["a", "b"] and y == [0, 1]


def test_missing_file_names_the_file(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"data file not found: .*nope\.csv"):
        datasets.wine(path=missing)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "empty file"),
        ("x,4,a,b\n", 1, "header must start with n_samples,n_features"),
        ("2,2\n1,2,0\n3,4,0\n", 1, "class names"),
        ("2,2,a,b\n1.0,2.0,0\n3.0,1\n", 3, "expected 3 comma-separated fields, got 2"),
        ("2,2,a,b\n1.0,2.0,0\n3.0,abc,1\n", 3, "a feature is not a number"),
        ("2,2,a,b\n1.0,nan,0\n3.0,1.0,1\n", 2, "not finite"),
        ("2,2,a,b\n1.0,2.0,0\n3.0,1.0,5\n", 3, r"class index must be 0\.\.1, got '5'"),
        ("2,2,a,b\n1.0,2.0,0\n3.0,1.0,-1\n", 3, "class index"),
    ],
)
def test_malformed_file_names_the_file_and_line(tmp_path, text, line, message):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(DataFileError, match=message) as info:
        datasets.iris(path=f)
    assert info.value.line == line
    assert str(info.value).startswith(f"{f}, line {line}: ")
    assert isinstance(info.value, ValueError)


def test_sample_count_mismatch_names_the_file(tmp_path):
    f = tmp_path / "short.csv"
    f.write_text("3,2,a,b\n1.0,2.0,0\n3.0,1.0,1\n")
    with pytest.raises(DataFileError, match=r"short\.csv: the header announces 3 samples, the file has 2"):
        datasets.iris(path=f)


# --- generated data ------------------------------------------------------------------------------


def test_moons_is_seeded_and_balanced():
    X, y = datasets.moons(100, noise=0.1, seed=0)
    assert len(X) == 100 and all(len(r) == 2 for r in X)
    assert Counter(y) == {0: 50, 1: 50}
    assert (X, y) == datasets.moons(100, noise=0.1, seed=0)
    assert X != datasets.moons(100, noise=0.1, seed=1)[0]
    X7, y7 = datasets.moons(7, seed=3)
    assert len(X7) == 7 and Counter(y7) == {0: 3, 1: 4}


def test_moons_without_noise_lie_on_two_half_circles():
    X, y = datasets.moons(50, noise=0.0, seed=0)
    for (a, b), c in zip(X, y, strict=True):
        if c == 0:  # (cos t, sin t), t in [0, pi]
            assert math.hypot(a, b) == pytest.approx(1.0) and b >= -1e-12
        else:  # (1 - cos t, 1/2 - sin t)
            assert math.hypot(a - 1.0, b - 0.5) == pytest.approx(1.0) and b <= 0.5 + 1e-12


def test_moons_does_not_touch_the_global_generator():
    import random

    random.seed(5)
    expected = random.random()
    random.seed(5)
    datasets.moons(20, seed=1)
    assert random.random() == expected


def test_circles_radii():
    X, y = datasets.circles(80, noise=0.0, factor=0.3, seed=2)
    assert Counter(y) == {0: 40, 1: 40}
    for (a, b), c in zip(X, y, strict=True):
        assert math.hypot(a, b) == pytest.approx(1.0 if c == 0 else 0.3)
    assert datasets.circles(seed=4) == datasets.circles(seed=4)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: datasets.moons(1), "n must be an integer >= 2, got 1"),
        (lambda: datasets.moons(10, noise=-1), "noise must be a finite number >= 0, got -1"),
        (lambda: datasets.circles(10, factor=1.0), r"factor must be a number in \(0, 1\), got 1.0"),
    ],
)
def test_generator_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- split and standardize -----------------------------------------------------------------------


def test_split_sizes_disjoint_and_seeded():
    X, y = datasets.iris()
    (Xtr, ytr), (Xte, yte) = datasets.split(X, y, test_fraction=0.3, seed=0)
    assert len(Xte) == 45 and len(Xtr) == 105
    assert sorted(map(tuple, Xtr + Xte)) == sorted(map(tuple, X))
    assert Counter(ytr) + Counter(yte) == Counter(y)
    assert datasets.split(X, y, seed=0) == ((Xtr, ytr), (Xte, yte))
    assert datasets.split(X, y, seed=1)[1] != (Xte, yte)
    # rows and labels stay paired
    pairs = {tuple(r): c for r, c in zip(X, y, strict=True)}
    assert all(pairs[tuple(r)] == c for r, c in zip(Xte, yte, strict=True))


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5, "0.3", True])
def test_split_bad_fraction(fraction):
    with pytest.raises(ValueError, match=r"test_fraction=.*must be a number in \(0, 1\), got"):
        datasets.split([[1.0], [2.0]], [0, 1], test_fraction=fraction)


def test_split_bad_data():
    with pytest.raises(ValueError, match="X is empty"):
        datasets.split([], [])
    with pytest.raises(ValueError, match="X has 2 examples but y has 1 labels"):
        datasets.split([[1.0], [2.0]], [0])
    with pytest.raises(ValueError, match="at least 2 examples"):
        datasets.split([[1.0]], [0])


def test_standardize_fits_on_train_only():
    train = ([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]], [0, 1, 0])
    test = ([[7.0, 11.0]], [1])
    (Xtr, ytr), (Xte, yte) = datasets.standardize(train, test)
    mean, std = 3.0, math.sqrt(8 / 3)
    assert Xtr == [[pytest.approx((v - mean) / std), 0.0] for v in (1.0, 3.0, 5.0)]
    assert Xte == [[pytest.approx((7.0 - mean) / std), 1.0]]  # the constant feature is only centred
    assert ytr == [0, 1, 0] and yte == [1]
    assert train[0][0] == [1.0, 10.0]  # inputs untouched


def test_standardize_wine_gives_unit_scale():
    X, y = datasets.wine()
    train, test = datasets.split(X, y, seed=0)
    (Xs, _), _ = datasets.standardize(train, test)
    for j in range(13):
        col = [r[j] for r in Xs]
        assert sum(col) / len(col) == pytest.approx(0.0, abs=1e-12)
        assert math.sqrt(sum(v * v for v in col) / len(col)) == pytest.approx(1.0)


def test_standardize_feature_count_mismatch():
    with pytest.raises(ValueError, match="train has 2 features, test has 1"):
        datasets.standardize(([[1.0, 2.0], [2.0, 3.0]], [0, 1]), ([[1.0]], [0]))
