"""SLeDGe (or any :class:`~torch_geometric_stream.base.StreamClassifier`) as a River classifier.

River (optional extra ``river``) feeds one ``dict`` of features at a time and
labels of any hashable type. :class:`RiverClassifier` fixes the features
from the first dict it sees (sorted: the order of a dict's keys does not
matter), maps labels to class ids in order of first sight
and builds the wrapped learner lazily, once the number of features is known::

    from river import datasets, evaluate, metrics
    from torch_geometric_stream.integrations.river import RiverClassifier

    model = RiverClassifier.sledge(num_classes=2, hidden_channels=64)
    evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())

Semi-supervised evaluation with River
-------------------------------------
:func:`river.evaluate.progressive_val_score` always hands the true label to
``learn_one`` (and to the metric). Hiding labels in the *dataset* would also
hide them from the metric, so the masking happens on the *model* side instead:
:class:`SemiSupervisedWrapper` receives every true label and passes it on only
for the positions its mask labels (``None``, i.e. unlabeled, otherwise)::

    ssl_model = SemiSupervisedWrapper(model, label_probability=0.01, seed=1)
    evaluate.progressive_val_score(datasets.Phishing(), ssl_model, metrics.Accuracy())

The metric still scores every prediction against the true label, exactly as
CapyMOA's ``prequential_ssl_evaluation`` does.
"""
from __future__ import annotations

import functools
import importlib
import math
import sys
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Callable, Hashable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import torch

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.evaluation.transforms import (StreamTransform, check_transform,
                                                          unchanged_on_error)
from torch_geometric_stream.models.registry import build_model
from torch_geometric_stream.validation import (check_bool, check_has_values, check_seed,
                                               check_unit_interval)

# by importlib: where River is missing (none that the extra accepts installs on
# Python 3.10), mypy takes `from river import base as _river_base` for a redefinition
_river_base: Optional[ModuleType]
_river_compose: Optional[ModuleType]
try:
    _river_base = importlib.import_module("river.base")
    _river_compose = importlib.import_module("river.compose")
except ImportError:  # the optional extra is missing: fail when a class is instantiated
    _river_base = _river_compose = None

__all__ = ["RiverClassifier", "SemiSupervisedWrapper", "LearnerFactory"]

#: Builds the wrapped learner from the number of features ``in_channels``.
LearnerFactory = Callable[[int], StreamClassifier]

_MiniBatchBase: type = _river_base.MiniBatchClassifier if _river_base else object
_ClassifierBase: type = _river_base.Classifier if _river_base else object


def _require_river(owner: str) -> None:
    if _river_base is None:
        raise ImportError(f"{owner} needs River: pip install river "
                          f"(or pip install 'torch_geometric_stream[river]')")


def _is_missing(label: Any) -> bool:
    """``None``, a NaN (Python or NumPy float, e.g. from a float32 label column) and
    ``pandas.NA`` mean "no label"."""
    if label is None or (isinstance(label, (float, np.floating)) and math.isnan(label)):
        return True
    pandas = sys.modules.get("pandas")  # only a label pandas made can be pandas.NA
    return pandas is not None and label is getattr(pandas, "NA", None)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


#: dtype kinds NumPy casts to float64 as ``float()`` casts each value: float, signed and
#: unsigned integer, bool.
_REAL_KINDS = "fiub"


def _real_array(make: Callable[[], Any], shape: tuple) -> Optional[np.ndarray]:
    """``make()`` as a float64 array of ``shape`` where NumPy holds it as real numbers,
    otherwise ``None``: complex, str, object (``None``, an int beyond int64), a value
    that is no scalar, or a tensor NumPy cannot read (``meta``, requiring grad)."""
    try:
        array = np.asarray(make())
    except (RuntimeError, TypeError, ValueError):  # a meta or grad tensor, a ragged row
        return None
    if array.dtype.kind not in _REAL_KINDS or array.shape != shape:
        return None
    return array.astype(np.float64)


def _number(feature: Hashable, value: Any) -> float:
    """``value`` as ``float``, or a ``ValueError`` naming ``feature`` (a
    ``TypeError`` for a tensor without values, e.g. on the ``meta`` device).

    Called only for rows :func:`_real_array` does not take; a complex NumPy value
    is refused here (``float()`` would drop its imaginary part with only a warning)."""
    if isinstance(value, np.complexfloating) or (isinstance(value, np.ndarray)
                                                 and value.dtype.kind == "c"):
        raise ValueError(f"feature {feature!r} must be a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:  # an int beyond float64, so beyond float32 too
        raise ValueError(f"feature {feature!r} is beyond float32's range "
                         f"(|x| <= {_FLOAT32_MAX:.7g})") from None
    except (RuntimeError, TypeError, ValueError):  # RuntimeError: a complex or meta tensor
        pass
    if isinstance(value, torch.Tensor):
        check_has_values(value, f"feature {feature!r}", strided=False)
    raise ValueError(f"feature {feature!r} must be a number, got {value!r}")


def _column(feature: Hashable, column: Any) -> np.ndarray:
    """A frame's ``column`` :math:`(n,)` as float64: at once where NumPy holds it
    as real numbers (a bool column beside float ones makes the whole frame
    object-typed), otherwise value by value with :func:`_number`; a pandas
    extension column (``Int64``, ``boolean``, ...) goes value by value too, so
    that a missing value (``pd.NA``, which NumPy would read as NaN) is named."""
    values = None
    if isinstance(getattr(column, "dtype", np.dtype(object)), np.dtype):
        values = _real_array(lambda: column, (len(column),))
    if values is None:
        values = np.array([_number(feature, value) for value in column], dtype=np.float64)
    return values


def _as_float32(values: np.ndarray, features: Sequence) -> np.ndarray:
    """float64 ``values`` (:math:`(d,)` or :math:`(n, d)`, columns in ``features`` order)
    as float32, or a ``ValueError`` naming the first feature whose finite value float32
    cannot hold (the cast would make it inf). NaN and inf pass: the learner refuses them."""
    with np.errstate(over="ignore"):
        rows = values.astype(np.float32)
    overflow = np.isfinite(values) & ~np.isfinite(rows)
    if overflow.any():
        where = tuple(np.argwhere(overflow)[0])
        raise ValueError(f"feature {features[where[-1]]!r} is {values[where]:g}, beyond "
                         f"float32's range (|x| <= {_FLOAT32_MAX:.7g})")
    return rows


def _check_label(label: Any) -> None:
    """``TypeError`` unless ``label`` is hashable by value (it keys the class mapping):
    a tensor hashes by identity, so each ``torch.tensor(0)`` would be a new class."""
    if isinstance(label, torch.Tensor):
        raise TypeError(f"a label must be hashable by value (a class name or id such as 1 "
                        f"or 'cat'), got a tensor {label!r}: pass label.item()")
    try:
        hash(label)
    except TypeError:
        raise TypeError(f"a label must be hashable (a class name or id such as 1 or 'cat'), "
                        f"got {type(label).__name__} {label!r}") from None


def _name_list(names: Iterable, argument: str) -> list:
    """``names`` as a list; ``TypeError`` for a string (or bytes), which would be
    read as one name per character."""
    if isinstance(names, (str, bytes)):
        kind = "string" if isinstance(names, str) else "bytes"
        raise TypeError(f"{argument} must be a sequence of names, got the {kind} {names!r}")
    return list(names)


def _feature_list(names: Iterable) -> list:
    """``feature_names`` as a list of distinct hashable names (each keys a dict),
    else a ``TypeError`` or ``ValueError`` naming the problem."""
    names = _name_list(names, "feature_names")
    if not names:
        raise ValueError("feature_names is empty: give at least one name, or None to take "
                         "the first sample's keys")
    seen: set = set()
    for name in names:
        try:
            hash(name)
        except TypeError:
            raise TypeError(f"feature_names must hold hashable names (dict keys), got "
                            f"{type(name).__name__} {name!r}") from None
        if name in seen:
            raise ValueError(f"feature_names must be distinct: {name!r} is given twice")
        seen.add(name)
    return names


def _class_list(classes: Iterable) -> list:
    """``classes`` as a list of distinct labels, hashable by value and none of which
    means "unlabeled" (``None``, NaN), else a ``TypeError`` or ``ValueError``."""
    classes = _name_list(classes, "classes")
    for position, label in enumerate(classes):
        _check_label(label)
        if _is_missing(label):
            raise ValueError(f"classes[{position}] is {label!r}, which means unlabeled: "
                             f"give class names or ids")
    if len(set(classes)) != len(classes):
        raise ValueError(f"classes must be distinct, got {classes}")
    return classes


def _sorted_features(keys: Iterable) -> list:
    """``keys`` sorted, or by type name and ``repr`` if they do not compare (``1``
    and ``"a"``): the same order whatever order they come in."""
    keys = list(keys)
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda key: (type(key).__name__, repr(key)))


def _check_frame(X: Any) -> None:
    """``TypeError`` unless ``X`` is a DataFrame-like table (``columns``, ``reindex``)."""
    if not hasattr(X, "columns") or not hasattr(X, "reindex"):
        raise TypeError(f"X must be a pandas.DataFrame (one column per feature), got "
                        f"{type(X).__name__}")


def _check_shares_a_feature(keys: Iterable, features: list, name: str) -> None:
    """``ValueError`` unless ``keys`` name at least one of the fixed ``features``:
    a missing feature reads 0 (River's sparse rows), but a row with none of them
    is all zeros, almost surely keyed by another feature set."""
    keys = list(keys)
    if not any(key in features for key in keys):
        shown = ", ".join(map(repr, features[:5])) + (", ..." if len(features) > 5 else "")
        raise ValueError(f"{name} has none of the {len(features)} features fixed by the first "
                         f"sample ({shown}), got {keys[:5]!r}")


class RiverClassifier(_MiniBatchBase):
    r"""River ``base.Classifier`` interface over a stream learner of this package.

    Args:
        learner (StreamClassifier or callable): a built
            :class:`~torch_geometric_stream.base.StreamClassifier` or a factory
            ``learner(in_channels) -> StreamClassifier`` called at the first
            ``learn_one``/``predict_one``, when the number of features becomes known
            (:meth:`sledge` builds such a factory). Prefer a factory: River's ``clone()`` then
            yields an untrained model.
        feature_names (Sequence[str], optional): feature order; default: the keys of the first dict
            seen, sorted (by type name and ``repr`` if they do not compare), so that the model does
            not depend on the order of a dict's keys. Keys missing from a later dict count as
            ``0.0`` (River's sparse convention), keys not in the order are ignored. Given, it is a
            non-empty sequence of distinct names (not a string).
        classes (Sequence[Hashable], optional): class labels in id order, distinct and none
            ``None`` or NaN (which mean "unlabeled"); default: ids are given to labels in order of
            first sight. More classes than the learner's ``num_classes`` raise :class:`ValueError`.
        transform (StreamTransform, optional): optional per-row input transform applied before the
            learner, e.g. :func:`~torch_geometric_stream.evaluation.transforms.make_transform`;
            deep-copyable (a prediction transforms with a copy), or a :class:`TypeError` says what
            to do. (default: :obj:`None`)

    Feature values are cast to float32: a finite value beyond its range (``1e39``)
    is a :class:`ValueError` naming the feature (a tensor without values, on the
    ``meta`` device, a :class:`TypeError`), and a label that is not hashable
    by value (``[1]``, or a tensor: pass ``label.item()``) a :class:`TypeError`; a
    call that raises changes nothing.

    ``learn_one(x, None)`` learns ``x`` unlabeled. ``predict_proba_one`` gives
    the probabilities of the classes seen so far (renormalized over them), an
    empty dict before any label, so ``predict_one`` then returns ``None``.
    """

    def __init__(self, learner: Union[StreamClassifier, LearnerFactory],
                 feature_names: Optional[Sequence[str]] = None,
                 classes: Optional[Sequence[Hashable]] = None,
                 transform: Optional[StreamTransform] = None) -> None:
        _require_river("RiverClassifier")
        if not isinstance(learner, StreamClassifier) and not callable(learner):
            raise TypeError(f"learner must be a StreamClassifier or a factory "
                            f"in_channels -> StreamClassifier, got {type(learner).__name__}")
        self.learner = learner
        self.feature_names = None if feature_names is None else _feature_list(feature_names)
        self.classes = None if classes is None else _class_list(classes)
        self.transform = check_transform(transform)
        self.model_: Optional[StreamClassifier] = (learner if isinstance(learner, StreamClassifier)
                                                   else None)
        self.features_: Optional[list] = self.feature_names
        self.classes_: list = list(self.classes or [])
        self._class_ids: dict = {label: i for i, label in enumerate(self.classes_)}
        if self.model_ is not None:
            self._check_model(self.model_)

    @classmethod
    def sledge(cls, num_classes: int, *, light: bool = False,
               feature_names: Optional[Sequence[str]] = None,
               classes: Optional[Sequence[Hashable]] = None,
               transform: Optional[StreamTransform] = None,
               input_scaling: Optional[str] = "online", light_memory: str = "full",
               **config: Any) -> "RiverClassifier":
        """A lazily built SLeDGe (``light=True``: SLeDGe-L).

        Args:
            num_classes (int): the classes :math:`c`.
            light (bool, optional): build SLeDGe-L. (default: :obj:`False`)
            feature_names (Sequence[str], optional): as for
                :class:`RiverClassifier`. (default: :obj:`None`)
            classes (Sequence[Hashable], optional): as for
                :class:`RiverClassifier`. (default: :obj:`None`)
            transform (StreamTransform, optional): as for
                :class:`RiverClassifier`. (default: :obj:`None`)
            input_scaling (str, optional): SLeDGe's; River's rows are raw, so
                with ``"online"`` SLeDGe min-max scales them with the running
                range it re-derives its memory from, as the command line's
                ``--scaling auto`` does for a stream without a known value
                range. ``None`` feeds the rows as given (e.g. scaled by
                ``transform``). (default: :obj:`"online"`)
            light_memory (str, optional): SLeDGe-L's (full mode does not read
                it); ``"full"``, the command line's package default, keeps the
                whole labeled memory of ``labeled_size`` slots, as the authors'
                light script keeps it. ``"per-class"`` keeps the paper's one
                labeled slot per class, into which every label of the class is
                merged with a weight that grows with its cosine to the slot; rows
                scaled to :math:`[-1, 1]` have low cosines, so the slot stays near
                the class's first labels. (default: :obj:`"full"`)
            **config (optional): SLeDGe keyword arguments.
        """
        factory = functools.partial(build_model,
                                    "sledge-light" if check_bool(light, "light") else "sledge",
                                    num_classes=num_classes, input_scaling=input_scaling,
                                    light_memory=light_memory, **config)
        return cls(factory, feature_names=feature_names, classes=classes, transform=transform)

    @property
    def _multiclass(self) -> bool:
        return True

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict]:
        """Arguments for River's estimator checks (``river.checks.check_estimator``):
        a small SLeDGe with room for the classes of the checks' datasets."""
        yield {"learner": functools.partial(build_model, "sledge", num_classes=8,
                                            labeled_size=16, unlabeled_size=16,
                                            hidden_channels=8, seed=0)}

    def _unit_test_skips(self) -> set[str]:
        """River's checks that do not apply: the features are fixed by the first
        sample (the learner's input width), so a batch keyed by none of them is
        refused rather than learned as features that appear."""
        return {"check_learn_many_matches_learn_one"}

    # -- conversion -------------------------------------------------------------------------
    def _check_model(self, model: StreamClassifier) -> None:
        if len(self.classes_) > model.num_classes:
            raise ValueError(f"{len(self.classes_)} classes given, the learner has "
                             f"{model.num_classes}")
        if self.features_ is not None and len(self.features_) != model.in_channels:
            raise ValueError(f"{len(self.features_)} features, the learner expects "
                             f"{model.in_channels}")

    def _model(self) -> StreamClassifier:
        if self.model_ is None:  # built by the factory once the features are fixed
            factory, features = self.learner, self.features_
            assert not isinstance(factory, StreamClassifier) and features is not None
            model = factory(len(features))
            if not isinstance(model, StreamClassifier):
                raise TypeError(f"the factory returned {type(model).__name__}, "
                                f"not a StreamClassifier")
            self._check_model(model)
            self.model_ = model
        return self.model_

    def _fix_features(self, keys: Iterable) -> list:
        """The features, fixed by ``keys`` (those of the first sample) if not yet."""
        if self.features_ is None:
            self.features_ = _sorted_features(keys)
            if not self.features_:
                raise ValueError("the first sample has no features")
        return self.features_

    def _row(self, x: dict, update: bool = True) -> Any:
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        features = self._fix_features(x)
        _check_shares_a_feature(x.keys(), features, "x")
        raw = [x.get(name, 0.0) for name in features]
        values = _real_array(lambda: np.array(raw), (len(raw),))
        if values is None:
            values = np.array([_number(name, value) for name, value in zip(features, raw)])
        row = _as_float32(values, features)
        return row if self.transform is None else self.transform.transform_one(row, update)

    def _rows(self, X: Any, update: bool = True) -> Any:
        _check_frame(X)
        features = self._fix_features(X.columns)
        _check_shares_a_feature(X.columns, features, "X")
        frame = X.reindex(columns=features, fill_value=0.0)
        rows = _real_array(frame.to_numpy, (len(frame), len(features)))
        if rows is None:  # column by column: the first feature that is no number is named
            rows = np.stack([_column(name, frame[name]) for name in features], axis=1)
        rows = _as_float32(rows, features)
        return rows if self.transform is None else self.transform.transform_many(rows, update)

    def _label_ids(self, labels: Sequence) -> tuple[list[int], list]:
        """Class ids of ``labels`` (``-1`` for missing) and the labels new to the mapping."""
        ids: list[int] = []
        new: list = []
        num_classes = self._model().num_classes
        for label in labels:
            _check_label(label)
            if _is_missing(label):
                ids.append(-1)
            elif label in self._class_ids:
                ids.append(self._class_ids[label])
            else:
                if label not in new:
                    if self.classes is not None or len(self.classes_) + len(new) >= num_classes:
                        raise ValueError(f"unknown class {label!r}: the learner has "
                                         f"{num_classes} classes, already "
                                         f"{self.classes_ + new}")
                    new.append(label)
                ids.append(len(self.classes_) + new.index(label))
        return ids, new

    def _register(self, new: list) -> None:
        for label in new:
            self._class_ids[label] = len(self.classes_)
            self.classes_.append(label)

    def _known_proba(self, proba: torch.Tensor) -> np.ndarray:
        """Probabilities :math:`(n, c)` restricted and renormalized to the known classes."""
        known = proba[:, :len(self.classes_)].double().cpu().numpy()
        total = known.sum(axis=1, keepdims=True)
        uniform = np.full_like(known, 1.0 / max(len(self.classes_), 1))
        return np.where(total > 0, known / np.where(total > 0, total, 1.0), uniform)

    @contextmanager
    def _unchanged_on_error(self, update: bool = True) -> Iterator[None]:
        """Undo what a failing call fixed or updated before it failed: the feature
        order, the lazily built learner and, for a call that ``update`` s the
        transform, its state (saved only then: a transform leaves its state as it
        was without ``update``; the learner itself leaves its state unchanged on
        bad input)."""
        features, model = self.features_, self.model_
        try:
            with unchanged_on_error(self.transform if update else None, sole=True):
                yield
        except Exception:
            self.features_, self.model_ = features, model
            raise

    # -- River API ----------------------------------------------------------------------------
    def learn_one(self, x: dict, y: Optional[Hashable] = None) -> None:
        """Learn one sample. A call that raises changes nothing.

        Args:
            x (dict): the features by name.
            y (Hashable, optional): the label; ``None`` (or NaN) learns ``x``
                unlabeled. (default: :obj:`None`)
        """
        with self._unchanged_on_error():
            row = self._row(x)
            ids, new = self._label_ids([y])
            self._model().learn(row, ids[0])
        self._register(new)

    def predict_proba_one(self, x: dict, **kwargs: Any) -> dict:
        """``{class: probability}`` over the classes seen so far (empty before any label).
        The transform's state does not change (the row is scaled as if it had arrived).

        Args:
            x (dict): the features by name.
            **kwargs (optional): ignored (River's signature).
        """
        with self._unchanged_on_error(update=False):
            row = self._row(x, update=False)
            proba = self._model().predict_proba(row)
        return dict(zip(self.classes_, self._known_proba(proba)[0].tolist()))

    def learn_many(self, X: Any, y: Any = None) -> None:
        """Learn the rows of a data frame in order. A call that raises changes nothing.

        Args:
            X (pandas.DataFrame): the rows.
            y (pandas.Series, optional): their labels; missing labels (or
                ``None``) = unlabeled. (default: :obj:`None`)

        Raises:
            ValueError: ``y`` not of ``X``'s length.
        """
        _check_frame(X)
        labels = [None] * len(X) if y is None else list(y)
        if len(labels) != len(X):
            raise ValueError(f"X has {len(X)} rows, y has {len(labels)} labels")
        with self._unchanged_on_error():
            rows = self._rows(X)
            ids, new = self._label_ids(labels)
            self._model().learn(rows, ids)
        self._register(new)

    def predict_proba_many(self, X: Any) -> Any:
        """A ``pandas.DataFrame`` of probabilities, one column per known class.

        Args:
            X (pandas.DataFrame): the rows.
        """
        import pandas as pd

        with self._unchanged_on_error(update=False):
            proba = self._model().predict_proba(self._rows(X, update=False))
        return pd.DataFrame(self._known_proba(proba), index=X.index, columns=self.classes_)


class SemiSupervisedWrapper(_ClassifierBase):
    r"""Hide labels from a River classifier so that supervised evaluation loops become SSL.

    Every ``learn_one(x, y)`` call counts as the next stream position; the
    label is passed on only where the mask labels that position.

    Args:
        model (river.base.Classifier): the River classifier to train (e.g. a
            :class:`RiverClassifier`).
        label_probability (float, optional): each position is labeled independently with this
            probability (drawn with ``numpy.random.default_rng(seed)``).
        mask (Sequence[bool], optional): alternatively, the labeled positions as booleans
            (``True`` = labeled), e.g. from
            :func:`~torch_geometric_stream.evaluation.label_mask.paper_label_mask`.
            (default: :obj:`None`)
        seed (int, optional): seed of the Bernoulli draws; ``None``: unseeded (fresh entropy from
            the operating system, River's convention). (default: :obj:`0`)
        pass_unlabeled (bool, optional): learn unlabeled positions with ``y=None``; ``None``
            (default) does so for a :class:`RiverClassifier` (or a pipeline
            ending in one) and skips them for other, supervised River models,
            as CapyMOA treats non-SSL learners.

    Attributes:
        n_seen: positions learned so far; **n_labeled:** of which labeled.
    """

    def __init__(self, model: Any, label_probability: Optional[float] = None, *,
                 mask: Optional[Sequence[bool]] = None, seed: Optional[int] = 0,
                 pass_unlabeled: Optional[bool] = None) -> None:
        _require_river("SemiSupervisedWrapper")
        if (label_probability is None) == (mask is None):
            raise ValueError("give exactly one of label_probability and mask")
        self.model = model
        self.label_probability = (None if label_probability is None
                                  else check_unit_interval(label_probability,
                                                           "label_probability"))
        self.mask = None if mask is None else np.asarray(mask, dtype=bool)
        self.seed = None if seed is None else check_seed(seed)
        self.pass_unlabeled = (None if pass_unlabeled is None
                               else check_bool(pass_unlabeled, "pass_unlabeled"))
        if self.mask is not None and self.mask.ndim != 1:
            raise ValueError(f"mask must be 1-D, got shape {self.mask.shape}")
        self._rng = np.random.default_rng(seed)
        self._pass = (self.pass_unlabeled if self.pass_unlabeled is not None
                      else _accepts_unlabeled(model))
        self.n_seen = 0
        self.n_labeled = 0

    @property
    def _multiclass(self) -> bool:
        return True

    def _next_is_labeled(self) -> bool:
        if self.mask is None:
            assert self.label_probability is not None  # given without a mask
            return bool(self._rng.random() < self.label_probability)
        if self.n_seen >= len(self.mask):
            raise ValueError(f"the mask covers {len(self.mask)} positions, the stream is longer")
        return bool(self.mask[self.n_seen])

    def learn_one(self, x: dict, y: Optional[Hashable] = None) -> None:
        """Learn ``x`` with ``y`` if this position is labeled, else unlabeled (or skip).

        A call the wrapped model rejects does not count as a position: the next
        call gets the same draw of the label mask.

        Args:
            x (dict): the features by name.
            y (Hashable, optional): the label; ``None`` (or NaN) for none.
                (default: :obj:`None`)
        """
        draws = self._rng.bit_generator.state
        labeled = self._next_is_labeled() and not _is_missing(y)
        try:
            if labeled:
                self.model.learn_one(x, y)
            elif self._pass:
                self.model.learn_one(x, None)
        except Exception:
            self._rng.bit_generator.state = draws
            raise
        self.n_seen += 1
        self.n_labeled += int(labeled)

    def predict_proba_one(self, x: dict, **kwargs: Any) -> dict:
        """The wrapped model's probabilities.

        Args:
            x (dict): the features by name.
            **kwargs (optional): passed on to the model's ``predict_proba_one``.
        """
        return self.model.predict_proba_one(x, **kwargs)

    def predict_one(self, x: dict, **kwargs: Any) -> Any:
        """The wrapped model's prediction.

        Args:
            x (dict): the features by name.
            **kwargs (optional): passed on to the model's ``predict_one``.
        """
        return self.model.predict_one(x, **kwargs)


def _accepts_unlabeled(model: Any) -> bool:
    """Whether ``model`` is, or is a River pipeline ending in, a :class:`RiverClassifier`."""
    assert _river_compose is not None  # called once River is there (_require_river)
    if isinstance(model, _river_compose.Pipeline):
        steps: Iterator = reversed(list(model.steps.values()))
        return _accepts_unlabeled(next(steps))
    return isinstance(model, (RiverClassifier, SemiSupervisedWrapper))
