"""A conditional-logit ranker over a log's candidate (agent, step) pairs.

Each candidate ``c`` of a log gets a score ``w · x_c``; the probability that it is the decisive
mistake is the softmax of the scores over the log's candidates (McFadden's conditional logit,
i.e. a listwise ranker with one relevant item). The weights minimise the negative
log-likelihood of the labelled candidates plus an L2 penalty, by Newton's method (the problem
is convex and has one weight per feature, so this converges in a few iterations; numpy is
enough and scikit-learn has no conditional logit).

>>> import numpy as np
>>> X = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])]
>>> m = fit(X, [0, 1], ("a", "b"))
>>> m.weights["a"] > 0 > m.weights["b"]
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

L2 = 1.0
"""Ridge penalty on the weights. Fixed a priori (the usual default of scikit-learn's
``LogisticRegression``, ``C = 1``), not tuned on the evaluation."""
ITERATIONS = 50

Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class Model:
    """Feature weights of the ranker (and what it was fitted on, for the record)."""

    weights: dict[str, float]
    fitted_on: str = ""

    def scores(self, X: Matrix, features: Sequence[str]) -> Matrix:
        w = np.array([self.weights.get(f, 0.0) for f in features])
        return X @ w

    def to_json(self) -> str:
        return json.dumps(
            {"weights": self.weights, "fitted_on": self.fitted_on, "l2": L2}, indent=2
        )

    @classmethod
    def load(cls, path: Path) -> Model:
        doc: dict[str, Any] = json.loads(path.read_text())
        return cls({str(k): float(v) for k, v in doc["weights"].items()}, doc.get("fitted_on", ""))


def softmax(s: Matrix) -> Matrix:
    e = np.exp(s - s.max())
    out: Matrix = e / e.sum()
    return out


def fit(
    X: Sequence[Matrix],
    y: Sequence[int],
    features: Sequence[str],
    sample_weight: Sequence[float] | None = None,
    fitted_on: str = "",
) -> Model:
    """Fit the weights on logs ``X[i]`` (candidates by features) whose true candidate is ``y[i]``.

    Logs with a single candidate carry no information and are skipped by the maths itself.
    """
    d = len(features)
    w = np.zeros(d)
    sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    loss = _loss(w, X, y, sw)
    for _ in range(ITERATIONS):
        grad = L2 * w
        hess = L2 * np.eye(d)
        for Xi, yi, si in zip(X, y, sw, strict=True):
            p = softmax(Xi @ w)
            mean = p @ Xi
            grad -= si * (Xi[yi] - mean)
            centred = Xi - mean
            hess += si * (centred.T * p) @ centred
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:  # backtracking: Newton steps can overshoot on flat softmax regions
            trial = _loss(w - t * step, X, y, sw)
            if trial <= loss:
                break
            t /= 2
        w, loss = w - t * step, trial
        if float(np.abs(t * step).max()) < 1e-8:
            break
    return Model({f: round(float(v), 6) for f, v in zip(features, w, strict=True)}, fitted_on)


def _loss(w: Matrix, X: Sequence[Matrix], y: Sequence[int], sw: Matrix) -> float:
    total = 0.5 * L2 * float(w @ w)
    for Xi, yi, si in zip(X, y, sw, strict=True):
        s = Xi @ w
        top = s.max()
        total -= si * (s[yi] - top - np.log(np.exp(s - top).sum()))
    return total
