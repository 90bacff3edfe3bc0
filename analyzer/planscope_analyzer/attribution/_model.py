"""A conditional-logit ranker over a log's candidate (agent, step) pairs.

Each candidate ``c`` of a log gets a score ``w · x_c``; the probability that it is the decisive
mistake is the softmax of the scores over the log's candidates (McFadden's conditional logit,
i.e. a listwise ranker with one relevant item). The weights minimise the weighted negative
log-likelihood of the labelled candidates plus an L2 penalty towards a *prior* weight vector
(by default zero), by Newton's method (convex, one weight per feature: a few iterations; numpy
is enough and scikit-learn has no conditional logit). The penalty is not a free choice:
:func:`fit_cv` picks it from :data:`L2_GRID` by an inner cross-validation on the training logs
only. With few logs the fit stays near the prior; with many the logs decide.

>>> import numpy as np
>>> X = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])]
>>> m = fit(X, [0, 1], ("a", "b"))
>>> m.weights["a"] > 0 > m.weights["b"]
True
>>> round(fit(X[:1], [0], ("a", "b"), l2=1e6, prior={"b": 2.0}).weights["b"], 2)  # the prior
2.0
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

L2_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)
"""Ridge penalties the inner cross-validation chooses from (a log-spaced grid around
scikit-learn's default ``C = 1``)."""
INNER_FOLDS = 5
ITERATIONS = 50

Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class Model:
    """Feature weights of the ranker (and what it was fitted on, for the record)."""

    weights: dict[str, float]
    fitted_on: str = ""
    l2: float = 1.0
    step_weights: dict[str, float] = field(default_factory=dict)
    """Stage 2: the weights that rank the blamed agent's own turns (empty: ``weights``)."""
    step_l2: float = 1.0

    def step_scores(self, X: Matrix, features: Sequence[str]) -> Matrix:
        """Scores of one agent's candidates under the stage-2 (step) weights."""
        return Model(self.step_weights or self.weights).scores(X, features)

    def scores(self, X: Matrix, features: Sequence[str]) -> Matrix:
        w = np.array([self.weights.get(f, 0.0) for f in features])
        out: Matrix = X @ w
        return out

    def to_json(self) -> str:
        return json.dumps(
            {
                "weights": self.weights,
                "fitted_on": self.fitted_on,
                "l2": self.l2,
                "step_weights": self.step_weights,
                "step_l2": self.step_l2,
            },
            indent=2,
        )


def softmax(s: Matrix) -> Matrix:
    e = np.exp(s - s.max())
    out: Matrix = e / e.sum()
    return out


@dataclass(frozen=True)
class _Stacked:
    """All logs' candidates in one matrix; ``starts[i]`` is where log ``i`` begins."""

    X: Matrix
    starts: NDArray[np.intp]
    seg: NDArray[np.intp]
    y: NDArray[np.intp]  # row of each log's labelled candidate in X
    sw: Matrix

    @classmethod
    def of(cls, X: Sequence[Matrix], y: Sequence[int], sw: Sequence[float]) -> _Stacked:
        sizes = np.array([len(x) for x in X], dtype=np.intp)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        return cls(
            np.vstack(X),
            starts,
            np.repeat(np.arange(len(X)), sizes),
            starts + np.asarray(y, dtype=np.intp),
            np.asarray(sw, dtype=float),
        )

    def loglik(self, w: Matrix) -> tuple[Matrix, Matrix]:
        """Per-log log-probability of the labelled candidate, and every candidate's p."""
        s = self.X @ w
        top = np.maximum.reduceat(s, self.starts)
        e = np.exp(s - top[self.seg])
        z = np.add.reduceat(e, self.starts)
        return s[self.y] - top - np.log(z), e / z[self.seg]


def fit(
    X: Sequence[Matrix],
    y: Sequence[int],
    features: Sequence[str],
    sample_weight: Sequence[float] | None = None,
    fitted_on: str = "",
    l2: float = 1.0,
    prior: Mapping[str, float] | None = None,
) -> Model:
    """Fit the weights on logs ``X[i]`` (candidates by features) whose true candidate is
    ``y[i]``, with ridge penalty ``l2`` towards ``prior`` (missing features: 0)."""
    sw = [1.0] * len(X) if sample_weight is None else list(sample_weight)
    data = _Stacked.of(X, y, sw)
    w = _newton(data, _prior(features, prior), l2)
    return Model({f: round(float(v), 6) for f, v in zip(features, w, strict=True)}, fitted_on, l2)


def _prior(features: Sequence[str], prior: Mapping[str, float] | None) -> Matrix:
    return np.array([(prior or {}).get(f, 0.0) for f in features], dtype=float)


def _newton(data: _Stacked, w0: Matrix, l2: float) -> Matrix:
    w = w0.copy()
    d = len(w0)

    def loss(v: Matrix) -> float:
        return 0.5 * l2 * float((v - w0) @ (v - w0)) - float(data.sw @ data.loglik(v)[0])

    current = loss(w)
    for _ in range(ITERATIONS):
        _, p = data.loglik(w)
        weight = p * data.sw[data.seg]
        mean = np.add.reduceat(p[:, None] * data.X, data.starts)
        grad = l2 * (w - w0) - data.sw @ (data.X[data.y] - mean)
        hess = l2 * np.eye(d) + (data.X.T * weight) @ data.X - (mean.T * data.sw) @ mean
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:  # backtracking: Newton steps can overshoot on flat softmax regions
            trial = loss(w - t * step)
            if trial <= current or t < 1e-6:
                break
            t /= 2
        w, current = w - t * step, trial
        if float(np.abs(t * step).max()) < 1e-8:
            break
    return w


def fit_cv(
    X: Sequence[Matrix],
    y: Sequence[int],
    features: Sequence[str],
    sample_weight: Sequence[float] | None = None,
    fitted_on: str = "",
    prior: Mapping[str, float] | None = None,
) -> Model:
    """:func:`fit` with the penalty (from :data:`L2_GRID`) that maximises the held-out
    log-likelihood of an inner :data:`INNER_FOLDS`-fold cross-validation over these logs."""
    sw = [1.0] * len(X) if sample_weight is None else list(sample_weight)
    w0 = _prior(features, prior)
    n = len(X)
    folds = [list(range(k, n, INNER_FOLDS)) for k in range(min(INNER_FOLDS, n))]
    best, choice = -np.inf, 1.0
    for l2 in L2_GRID:
        total = 0.0
        for test in folds:
            held = set(test)
            train = [i for i in range(n) if i not in held]
            if not train:
                continue
            w = _newton(
                _Stacked.of([X[i] for i in train], [y[i] for i in train], [sw[i] for i in train]),
                w0,
                l2,
            )
            probe = _Stacked.of([X[i] for i in test], [y[i] for i in test], [sw[i] for i in test])
            total += float(probe.sw @ probe.loglik(w)[0])
        if total > best:
            best, choice = total, l2
    return fit(X, y, features, sw, fitted_on, choice, prior)
