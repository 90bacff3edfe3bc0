"""A first-event (discrete-time proportional-hazards) ranker over a log's candidate (agent, step)
pairs, read in history order.

Each candidate ``c`` of a log with ``m`` candidates has a rate ``λ_c = exp(w · x_c + b)`` per
unit of the log's relative time and spans ``1/m`` of it, so its hazard (the chance that the
decisive mistake happens here, given none before) is ``h_c = 1 - exp(-λ_c / m)``; the first
mistake is candidate ``k`` with probability ``h_k · Π_{j<k} (1 - h_j)``. A labelled log says
"no mistake before the label, the mistake at it" and nothing about later turns (censored).
The weights minimise the weighted negative log-likelihood plus an L2 penalty towards a *prior*
weight vector (by default zero; the base rate ``b`` is not penalised), by Newton's method
(convex: the complementary log-log link; numpy is enough). The penalty is not a free choice:
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
    """Feature weights and base rate of the ranker (and what it was fitted on, for the record)."""

    weights: dict[str, float]
    fitted_on: str = ""
    l2: float = 1.0
    step_weights: dict[str, float] = field(default_factory=dict)
    """Stage 2: the weights that rank the blamed agent's own turns (empty: ``weights``)."""
    step_l2: float = 1.0
    rate: float = 0.0
    """The log base rate ``b`` of stage 1 (``λ = exp(w·x + b)``)."""
    step_rate: float = 0.0

    def step_scores(self, X: Matrix, features: Sequence[str]) -> Matrix:
        """Log-rates of one agent's candidates under the stage-2 (step) weights."""
        if not self.step_weights:
            return self.scores(X, features)
        return Model(self.step_weights, rate=self.step_rate).scores(X, features)

    def scores(self, X: Matrix, features: Sequence[str]) -> Matrix:
        """Log-rates ``w·x + b`` of candidates (rows of ``X``)."""
        w = np.array([self.weights.get(f, 0.0) for f in features])
        out: Matrix = X @ w + self.rate
        return out

    def to_json(self) -> str:
        return json.dumps(
            {
                "weights": self.weights,
                "rate": self.rate,
                "fitted_on": self.fitted_on,
                "l2": self.l2,
                "step_weights": self.step_weights,
                "step_rate": self.step_rate,
                "step_l2": self.step_l2,
            },
            indent=2,
        )


def first_event(s: Matrix) -> Matrix:
    """P(the first mistake is candidate ``k``) for one log's candidates in history order, from
    their log-rates ``s``: each spans ``1/m`` of the log's relative time, its hazard is
    ``h_k = 1 - exp(-exp(s_k) / m)``, and ``P(k) = h_k · Π_{j<k} (1 - h_j)``, normalised over
    the log (every log scored failed).

    >>> [round(float(v), 3) for v in first_event(np.zeros(2))]  # equal rates: earlier first
    [0.622, 0.378]
    """
    mu = np.exp(np.clip(s, -_CLIP, _CLIP)) / len(s)
    before = np.concatenate([[0.0], np.cumsum(mu)[:-1]])
    p = -np.expm1(-mu) * np.exp(-before)
    out: Matrix = p / p.sum()
    return out


_CLIP = 50.0
"""Log-rates are clipped to ±50 (a hazard of 1 or of e^-50): beyond, float64 saturates."""


@dataclass(frozen=True)
class _Stacked:
    """All logs' candidates *at risk* (up to and including the labelled one; the later ones are
    censored: nobody said whether they are mistakes too) in one matrix, with a column of ones
    for the base rate, the log-exposure offset ``-log m`` and the event indicator."""

    Z: Matrix
    off: Matrix
    event: NDArray[np.bool_]
    seg: NDArray[np.intp]
    sw: Matrix

    @classmethod
    def of(cls, X: Sequence[Matrix], y: Sequence[int], sw: Sequence[float]) -> _Stacked:
        at_risk = [k + 1 for k in y]
        pairs = list(zip(X, at_risk, strict=True))
        return cls(
            np.vstack([np.hstack([x[:r], np.ones((r, 1))]) for x, r in pairs]),
            np.concatenate([np.full(r, -np.log(len(x))) for x, r in pairs]),
            np.concatenate([np.arange(r) == r - 1 for r in at_risk]),
            np.repeat(np.arange(len(X)), at_risk),
            np.asarray(sw, dtype=float),
        )

    def terms(self, theta: Matrix) -> tuple[Matrix, Matrix, Matrix]:
        """Per-log log-likelihood ``log h_y + Σ_{j<y} log(1 - h_j)``, and each row's first and
        second derivative by its linear predictor (concave: the cloglog link)."""
        mu = np.exp(np.clip(self.Z @ theta + self.off, -_CLIP, _CLIP))
        hit = -np.expm1(-mu)  # h = 1 - exp(-mu)
        a = mu * np.exp(-mu) / hit  # d log h / ds
        ll = np.where(self.event, np.log(hit), -mu)
        d1 = np.where(self.event, a, -mu)
        d2 = np.where(self.event, a * (1.0 - mu / hit), -mu)
        per_log: Matrix = np.bincount(self.seg, ll, minlength=len(self.sw)).astype(float)
        return per_log, d1, d2


def fit(
    X: Sequence[Matrix],
    y: Sequence[int],
    features: Sequence[str],
    sample_weight: Sequence[float] | None = None,
    fitted_on: str = "",
    l2: float = 1.0,
    prior: Mapping[str, float] | None = None,
) -> Model:
    """Fit the weights and base rate on logs ``X[i]`` (candidates by features, in history order)
    whose first mistake is candidate ``y[i]``, with ridge penalty ``l2`` towards ``prior``
    (missing features: 0) on the weights; the base rate is not penalised."""
    sw = [1.0] * len(X) if sample_weight is None else list(sample_weight)
    theta = _newton(_Stacked.of(X, y, sw), _prior(features, prior), l2)
    weights = {f: round(float(v), 6) for f, v in zip(features, theta[:-1], strict=True)}
    return Model(weights, fitted_on, l2, rate=round(float(theta[-1]), 6))


def _prior(features: Sequence[str], prior: Mapping[str, float] | None) -> Matrix:
    return np.array([(prior or {}).get(f, 0.0) for f in features], dtype=float)


def _newton(data: _Stacked, w0: Matrix, l2: float) -> Matrix:
    """The penalised maximum-likelihood ``(w, b)``, starting from the prior and ``b = 0``."""
    theta0 = np.append(w0, 0.0)
    pen = np.append(np.ones(len(w0)), 0.0)  # the base rate is not shrunk
    theta = theta0.copy()

    def loss(v: Matrix) -> float:
        return 0.5 * l2 * float(pen @ (v - theta0) ** 2) - float(data.sw @ data.terms(v)[0])

    current = loss(theta)
    for _ in range(ITERATIONS):
        _, d1, d2 = data.terms(theta)
        rw = data.sw[data.seg]
        grad = l2 * pen * (theta - theta0) - data.Z.T @ (rw * d1)
        hess = np.diag(l2 * pen + 1e-9) + (data.Z.T * (rw * -d2)) @ data.Z
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:  # backtracking: Newton steps can overshoot where the hazard saturates
            trial = loss(theta - t * step)
            if trial <= current or t < 1e-6:
                break
            t /= 2
        theta, current = theta - t * step, trial
        if float(np.abs(t * step).max()) < 1e-8:
            break
    return theta


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
            total += float(probe.sw @ probe.terms(w)[0])
        if total > best:
            best, choice = total, l2
    return fit(X, y, features, sw, fitted_on, choice, prior)
