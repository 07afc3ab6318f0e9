"""SLeDGe and SLeDGe-L as CapyMOA semi-supervised learners.

CapyMOA (optional extra ``capymoa``; bundles MOA and needs a Java runtime)
evaluates semi-supervised learners that subclass ``capymoa.base.ClassifierSSL``
with ``capymoa.evaluation.prequential_ssl_evaluation``: every instance is
predicted, then trained on with :meth:`~CapyMOASLeDGe.train` when the
evaluator reveals its label (``label_probability``) and with
:meth:`~CapyMOASLeDGe.train_on_unlabeled` otherwise::

    from capymoa.evaluation import prequential_ssl_evaluation
    from capymoa.stream import NumpyStream
    from torch_geometric_stream.integrations.capymoa import CapyMOASLeDGe

    stream = NumpyStream(X, y)
    learner = CapyMOASLeDGe(stream.get_schema(), hidden_channels=64)
    results = prequential_ssl_evaluation(stream, learner, label_probability=0.01)
    results.cumulative.accuracy()

Features are taken as ``instance.x`` (nominal attributes as their value
index), the class as ``instance.y_index``; sizes come from the schema.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from torch_geometric_stream.evaluation.transforms import (StreamTransform, check_transform,
                                                          unchanged_on_error)
from torch_geometric_stream.models.registry import build_model
from torch_geometric_stream.validation import check_bool

try:
    from capymoa.base import ClassifierSSL as _ClassifierSSL
    _CAPYMOA_ERROR: Optional[Exception] = None
except (ImportError, RuntimeError) as error:  # missing package, or no usable Java runtime
    _ClassifierSSL, _CAPYMOA_ERROR = object, error

__all__ = ["CapyMOASLeDGe", "CapyMOASLeDGeLight"]


class CapyMOASLeDGe(_ClassifierSSL):
    r"""SLeDGe (``light=True``: SLeDGe-L) behind CapyMOA's ``ClassifierSSL`` interface.

    Args:
        schema (capymoa.stream.Schema): the stream's ``capymoa.stream.Schema`` (classification).
        light (bool, optional): build SLeDGe-L (a TypeError for anything but a
            bool). (default: :obj:`False`)
        random_seed (int, optional): seed of SLeDGe's parameter initialization. (default: :obj:`1`)
        transform (StreamTransform, optional): optional per-row input transform applied to
            ``instance.x``, e.g.
            :func:`~torch_geometric_stream.evaluation.transforms.make_transform` (default: none,
            the stream is used as given); deep-copyable (a prediction transforms with a copy), or a
            :class:`TypeError` says what to do.
        input_scaling (str, optional): SLeDGe's; ``"online"`` (the default) min-max scales the raw
            rows with the running range SLeDGe re-derives its memory from, as the
            command line's ``--scaling auto`` does for a stream without a known
            value range; ``None`` feeds them as given (e.g. scaled by ``transform``).
        light_memory (str, optional): SLeDGe-L's labeled memory (full mode does not read it):
            ``"full"`` (the default, the command line's package default) or the
            paper's one slot per class, ``"per-class"`` (see
            :meth:`~torch_geometric_stream.integrations.river.RiverClassifier.sledge`
            for what it measured on River's streams).
        **config (optional): SLeDGe keyword arguments (``hidden_channels``, ``labeled_size``, ...).
    """

    def __init__(self, schema: Any, *, light: bool = False, random_seed: int = 1,
                 transform: Optional[StreamTransform] = None,
                 input_scaling: Optional[str] = "online", light_memory: str = "full",
                 **config: Any) -> None:
        if _CAPYMOA_ERROR is not None:
            raise ImportError(f"{type(self).__name__} needs CapyMOA and a Java runtime: "
                              f"pip install capymoa ({_CAPYMOA_ERROR})") from _CAPYMOA_ERROR
        light = check_bool(light, "light")
        if "seed" in config:
            raise TypeError("pass the seed as random_seed, CapyMOA's name for it")
        if not schema.is_classification():
            raise ValueError("CapyMOASLeDGe needs a classification schema")
        transform = check_transform(transform)
        super().__init__(schema=schema, random_seed=random_seed)
        self.light = light
        self.transform = transform
        self.config = dict(config, input_scaling=input_scaling, light_memory=light_memory)
        self.model = build_model("sledge-light" if self.light else "sledge",
                                 schema.get_num_attributes(), schema.get_num_classes(),
                                 seed=random_seed, **self.config)

    def __str__(self) -> str:
        return "SLeDGe-L" if self.light else "SLeDGe"

    def _features(self, instance: Any, update: bool = True) -> Any:
        x = np.asarray(instance.x, dtype=np.float32)
        return x if self.transform is None else self.transform.transform_one(x, update)

    def train(self, instance: Any) -> None:
        """Learn a labelled instance. A call that raises changes nothing, the
        transform's state included.

        Args:
            instance (capymoa.instance.LabeledInstance): the instance, its class
                ``instance.y_index``.

        Raises:
            ValueError: an instance without label (``y_index`` below 0).
        """
        label = int(instance.y_index)
        if label < 0:
            raise ValueError(f"train needs a labelled instance, got y_index={label}: "
                             f"learn it with train_on_unlabeled")
        with unchanged_on_error(self.transform, sole=True):
            self.model.learn(self._features(instance), label)

    def train_on_unlabeled(self, instance: Any) -> None:
        """Learn an instance without its label. A call that raises changes nothing.

        Args:
            instance (capymoa.instance.Instance): the instance.
        """
        with unchanged_on_error(self.transform, sole=True):
            self.model.learn(self._features(instance), -1)

    def predict_proba(self, instance: Any) -> np.ndarray:
        """Class probabilities. Changes nothing, the transform's state included
        (the row is scaled as if it had arrived).

        Args:
            instance (capymoa.instance.Instance): the instance, its features in
                ``instance.x``.

        Returns:
            numpy.ndarray: float64, shape ``(schema.get_num_classes(),)``.
        """
        proba = self.model.predict_proba(self._features(instance, update=False))[0]
        return proba.double().cpu().numpy()


class CapyMOASLeDGeLight(CapyMOASLeDGe):
    """SLeDGe-L: :class:`CapyMOASLeDGe` with ``light=True``.

    Args:
        schema: as for :class:`CapyMOASLeDGe`.
        random_seed (int, optional): as for :class:`CapyMOASLeDGe`. (default: ``1``)
        transform (StreamTransform, optional): as for :class:`CapyMOASLeDGe`.
            (default: :obj:`None`)
        **config: as for :class:`CapyMOASLeDGe`.
    """

    def __init__(self, schema: Any, *, random_seed: int = 1,
                 transform: Optional[StreamTransform] = None, **config: Any) -> None:
        super().__init__(schema, light=True, random_seed=random_seed, transform=transform,
                         **config)
