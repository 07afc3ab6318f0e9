r"""Active learning: the stream asks for the labels its learner is unsure of.

A label mask fixes in advance which samples are labeled. With a budget of
labels, asking for those of the samples the learner is least sure of often
spends it better: :class:`UncertaintyQuery` decides, from the learner's class
probabilities for a sample (its test prediction), whether to ask for that
sample's label, as MOA's ``ALUncertainty`` does (Žliobaitė, Bifet, Pfahringer
and Holmes, *Active Learning With Drifting Streaming Data*, 2014):

- the budget :math:`b`: a label may be asked for only while the labels asked
  so far over the samples seen so far (this one included) stay below
  :math:`b`;
- ``fixed-uncertainty``: ask when the largest probability :math:`p_{max}` is
  below a fixed ``threshold`` :math:`u`;
- ``variable-uncertainty``: ask when :math:`p_{max} < \theta` (:math:`\theta = 1`
  at first), then lower :math:`\theta` by the factor :math:`1 - s`; raise it by
  :math:`1 + s` when not asking (``step`` :math:`s`): the threshold follows the
  learner's confidence, so the budget is spent over the whole stream, also
  after a drift;
- ``randomized-uncertainty``: as ``variable-uncertainty`` on :math:`p_{max} /
  (1 + \eta)`, :math:`\eta \sim \mathcal{N}(0, 1)` a draw per sample, so that
  confident regions, where a drift may go unseen, are asked about too;
- ``selective-sampling``: ask with probability :math:`b / (b + |p_{max} -
  1/c|)` (Cesa-Bianchi, Gentile and Zaniboni, 2006).

The learner learns the samples not asked about without label.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Mapping

import numpy as np
import torch

from torch_geometric_stream.validation import (check_choice, check_has_values,
                                               check_positive_int, check_real, check_seed,
                                               check_unit_interval, generator_from_state)

__all__ = ["LABEL_QUERIES", "UncertaintyQuery", "host_probabilities"]

#: The strategies of :class:`UncertaintyQuery`.
LABEL_QUERIES = ("fixed-uncertainty", "variable-uncertainty", "randomized-uncertainty",
                 "selective-sampling")

#: Probabilities up to this over their number sum to a finite float64 (half its
#: largest: room for the sum's rounding).
_SUMMABLE = float(np.finfo(np.float64).max) / 2

_STATE_KEYS = ("strategy", "budget", "threshold", "step", "seen", "asked", "variable_threshold",
               "rng")


def _fraction(value: Any, name: str) -> float:
    """``value`` as a float in :math:`[0, 1]`, else raise naming ``name``."""
    number = check_real(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return number


def _no_numbers(probabilities: Any, error: Exception) -> TypeError:
    """The error for ``probabilities`` that NumPy does not read as numbers (``error``)."""
    return TypeError(f"probabilities must be numbers, a (c,) array, tensor or list, got "
                     f"{type(probabilities).__name__} ({error})")


class UncertaintyQuery:
    r"""Whether to ask for a sample's label, from the learner's class probabilities.

    Args:
        strategy (str): one of :data:`LABEL_QUERIES`.
        budget (float): :math:`b \in (0, 1]`: a label is asked for only while
            the labels asked so far over the samples seen (this one included)
            stay below :math:`b`, as in MOA's ``ALUncertainty``; so after
            :math:`n` samples fewer than :math:`b n + 1` labels were asked for,
            a share that can pass :math:`b` by up to one label (the first
            sample's label may be asked for at any :math:`b`).
        threshold (float, optional): :math:`u \in [0, 1]` of ``fixed-uncertainty`` (default
            0.9, MOA's).
        step (float, optional): :math:`s \in [0, 1]` of the variable strategies (default 0.01,
            MOA's).
        seed (int, optional): seed of the draws of ``randomized-uncertainty`` and
            ``selective-sampling`` (:func:`numpy.random.default_rng`).

    Raises:
        TypeError, ValueError: an argument outside its range, naming it.

    Example:
        >>> query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
        >>> query([0.6, 0.4]), query([0.55, 0.45]), query([0.5, 0.5]), query.asked
        (True, False, True, 2)
    """

    def __init__(self, strategy: str, budget: float, threshold: float = 0.9,
                 step: float = 0.01, seed: int = 0) -> None:
        if not isinstance(strategy, str):
            raise TypeError(f"strategy must be one of {LABEL_QUERIES}, got {strategy!r}")
        check_choice(strategy, LABEL_QUERIES, "strategy")
        self.strategy = strategy
        self.budget = check_unit_interval(budget, "budget")
        self.threshold = _fraction(threshold, "threshold")
        self.step = _fraction(step, "step")
        self._rng = np.random.default_rng(check_seed(seed))
        self.seen = 0  # samples seen, the current one included once it is asked about
        self.asked = 0  # labels asked for
        self.variable_threshold = 1.0  # theta of the variable strategies

    def __call__(self, probabilities: Any) -> bool:
        r"""Whether to ask for the label of the sample whose class probabilities
        the learner gave as ``probabilities`` (:math:`(c,)` or :math:`(1, c)`,
        a tensor, an array or a list; normalized here where they sum above 0),
        counting the sample and, if asked, its label.

        Probabilities whose sum overflows ``float64`` (finite ones near its
        largest) are divided by the largest first.

        Raises:
            ValueError: ``probabilities`` hold a NaN, an inf or a negative value, are
                empty or have another shape (the state is left as it was).
            TypeError: ``probabilities`` are no numbers, bools or complex numbers, a
                tensor on the ``meta`` device, or a mapping (River's
                ``{class: probability}``: pass a :math:`(c,)` array in class-id
                order); the state is left as it was.
        """
        largest, classes = self._largest_probability(probabilities)
        self.seen += 1
        if self.asked / self.seen >= self.budget:
            return False  # over the budget: nothing is asked, theta stays
        ask = self._decide(largest, classes)
        self.asked += ask
        return ask

    def _decide(self, largest: float, classes: int) -> bool:
        if self.strategy == "fixed-uncertainty":
            return bool(largest < self.threshold)
        if self.strategy == "selective-sampling":
            margin = abs(largest - 1.0 / classes)
            return bool(self._rng.random() < self.budget / (self.budget + margin))
        if self.strategy == "randomized-uncertainty":
            largest = largest / (self._rng.standard_normal() + 1.0)
        ask = largest < self.variable_threshold
        self.variable_threshold *= (1.0 - self.step) if ask else (1.0 + self.step)
        return bool(ask)

    @staticmethod
    def _largest_probability(probabilities: Any) -> tuple[float, int]:
        """The largest of ``probabilities`` once they sum to 1 (0 for one class,
        as MOA has it) and the number of classes, checked."""
        probabilities = host_probabilities(probabilities)
        if isinstance(probabilities, Mapping):
            raise TypeError(f"probabilities must be a (c,) array, tensor or list, got "
                            f"{type(probabilities).__name__}: a River dict of probabilities "
                            f"by class is not taken; pass them as a (c,) array in class-id "
                            f"order")
        try:
            given = np.asarray(probabilities)
        except (TypeError, ValueError) as error:  # e.g. ragged
            raise _no_numbers(probabilities, error) from None
        if given.dtype.kind in "bc":  # a cast would read True as 1, drop an imaginary part
            raise TypeError(f"probabilities must be real numbers, got "
                            f"{'bool' if given.dtype.kind == 'b' else 'complex'} values")
        try:  # numbers converted once; others (None: NaN, strings) as numpy reads them
            values = (given.astype(np.float64, copy=False) if given.dtype.kind in "iuf"
                      else np.asarray(probabilities, dtype=np.float64))
        except (TypeError, ValueError) as error:  # e.g. strings, None
            raise _no_numbers(probabilities, error) from None
        except OverflowError:  # an int beyond float64's range
            raise ValueError(f"probabilities must be finite numbers >= 0, got "
                             f"{probabilities!r}") from None
        if values.ndim == 2 and values.shape[0] == 1:
            values = values[0]
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"probabilities must be one sample's (c,) or (1, c), got shape "
                             f"{tuple(np.shape(probabilities))}")
        if not np.isfinite(values).all() or (values < 0).any():
            raise ValueError(f"probabilities must be finite numbers >= 0, got {values.tolist()}")
        if values.size == 1:
            return 0.0, 1
        largest = values.max()
        if largest > _SUMMABLE / values.size:  # the sum could overflow: scaled by the largest
            values, largest = values / largest, 1.0
        total = values.sum()
        return float(largest / total) if total > 0 else float(largest), values.size

    def state_dict(self) -> Dict[str, Any]:
        """The settings, counts, current threshold and the random generator's state."""
        return {"strategy": self.strategy, "budget": self.budget, "threshold": self.threshold,
                "step": self.step, "seen": self.seen, "asked": self.asked,
                "variable_threshold": self.variable_threshold,
                "rng": self._rng.bit_generator.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from what :meth:`state_dict` returned, for a query of the same
        settings (everything is checked before anything changes).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.

        Raises:
            ValueError: a missing entry, settings that differ from this query's
                (naming them), counts that no run gives (``asked`` not below
                ``budget * seen + 1``), a threshold that is not a finite number >= 0, or a
                generator state NumPy refuses.
            TypeError: a ``strategy`` that is no str, a ``budget``, ``threshold`` or
                ``step`` that is no real number (naming it), or counts that are no
                integers.
        """
        missing = [key for key in _STATE_KEYS if key not in state]
        if missing:
            raise ValueError(f"the label query's state lacks the entries {missing}")
        if not isinstance(state["strategy"], str):
            raise TypeError(f"the label query's strategy must be a str, got "
                            f"{type(state['strategy']).__name__}")
        for key in ("budget", "threshold", "step"):  # (an array would compare elementwise)
            check_real(state[key], f"the label query's {key}")
        differing = [f"{key}={state[key]!r} (this query: {getattr(self, key)!r})"
                     for key in ("strategy", "budget", "threshold", "step")
                     if state[key] != getattr(self, key)]
        if differing:
            raise ValueError(f"the label query's state was kept with {', '.join(differing)}: "
                             f"continue it with the settings it was kept with")
        seen = check_positive_int(state["seen"], "the label query's seen", minimum=0)
        asked = check_positive_int(state["asked"], "the label query's asked", minimum=0)
        # the last label was asked while the ones before it stayed below the budget
        if asked > seen or (asked and (asked - 1) / seen >= self.budget):
            raise ValueError(f"the label query's state asked {asked} labels of {seen} "
                             f"samples, beyond its budget={self.budget}: a query asks fewer "
                             f"than budget * seen + 1")
        variable = check_real(state["variable_threshold"], "the label query's variable_threshold")
        if not (math.isfinite(variable) and variable >= 0):  # 0 after a step of 1, as MOA's
            raise ValueError(f"the label query's variable_threshold must be a finite number "
                             f">= 0, got {variable}")
        rng = generator_from_state(state["rng"], "the label query's rng state")
        self.seen, self.asked, self.variable_threshold, self._rng = seen, asked, variable, rng

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.strategy!r}, budget={self.budget}, "
                f"threshold={self.threshold}, step={self.step})")


def host_probabilities(probabilities: Any) -> Any:
    """``probabilities`` as a query reads them: a tensor detached and on the CPU
    (one read from its device), checked to hold values; anything else as given.

    Args:
        probabilities (Any): one sample's class probabilities, e.g. a learner's
            ``predict_proba``.

    Raises:
        TypeError: a tensor on the ``meta`` device or a sparse one.
    """
    if isinstance(probabilities, torch.Tensor):
        if probabilities.is_meta or probabilities.layout != torch.strided:  # (rare)
            check_has_values(probabilities, "probabilities")
        if probabilities.requires_grad or not probabilities.is_cpu:  # else: already read
            probabilities = probabilities.detach().cpu()
    return probabilities
