"""A straightforward dense SLeDGe that follows the authors' code structure.

``DenseReferenceSLeDGe`` is the baseline of ``benchmarks/step_latency.py`` and
the oracle of ``tests/test_reference_equivalence.py``. It is written the way
the authors' implementation (Heechan-Moon/SLeDGe, ``src/helper.py``,
``src/utils.py``, ``src/Memory.py``, ``src/embedding_function.py``,
``src/pruning_function.py``) is structured, per sample:

* **predict**: ``X = cat([active labeled; active unlabeled; x])``, embed every
  row, build the ``(N, N)`` cosine-similarity matrix (light mode: only the
  query row's ``(1, N)`` block), keep a dense top-(k+1) mask per query row,
  normalize the dense adjacency with dense diagonal degree matrices
  (``D^-1/2 A_hat D^-1/2`` as matrix products, like their ``get_adj``), run
  the GCN layers with dense products and read the last row;
* **memory update**: embed the whole labeled or unlabeled bank again and merge
  into the most similar prototype;
* **train**: ``X' = cat([active labeled; active unlabeled])``, embed it, dense
  graph and propagation as above, cross-entropy on the labeled rows, and the
  structure regularizer computed by embedding the memory *again* and comparing
  two dense ``(M, M)`` (light: ``(c, M)``) similarity matrices with
  ``nn.MSELoss``; one Adam step.

It has, however, exactly the semantics and parameterization of
:class:`torch_geometric_stream.SLeDGe` (this package), so both produce the
same predictions and parameters up to float rounding:

* parameters are copies of ``graph.embedding.lins``, ``backbone.convs[i].lin``
  / ``.bias`` and ``backbone.norms`` (in ``named_parameters()`` order, so the
  optimizer state of a trained model loads as is);
* the memory follows ``DualPrototypeMemory``: per-class slot partitions of
  ``floor(L/c)`` slots (light: one), adaptive alpha/beta
  ``(1 - 1/max(count + count_offset, 1)) * max(sim, 0)`` or fixed floats,
  ages, slot order labeled then unlabeled; a merge into an all-zero
  prototype stores the new sample;
* every query row keeps its top-(k+1) rows (itself included as a candidate);
  light mode: only the test row at prediction and the labeled rows in
  training get edges;
* ``supervise_graph=False``: the similarity matrix enters the training
  loss detached, so only the regularizer trains the embedding;
* ``"symmetric"`` normalization = PyG ``gcn_norm`` with
  ``add_remaining_self_loops`` (an existing self-loop keeps its weight, others
  get 1) and degrees from non-negative weights only (a non-positive degree
  becomes 1); ``"symmetric-add"`` the same with ``I`` added to every diagonal
  entry (``A + I`` as the paper writes it); ``"mean"`` = every kept entry
  divided by its row's number of kept entries (the authors' ``1/(k+1)``), no
  extra self-loop;
* GCNConv layers ``h = A_hat @ (h W^T) + b`` (``bias_position="before"``:
  ``A_hat @ (h W^T + b)``, the authors' layers) with LayerNorm + ReLU between;
* loss: temporally weighted cross-entropy averaged over the labeled rows, plus
  ``lam`` times the regularizer (``"plain"``: MSE of the similarity matrices,
  ``"frobenius"``: each divided by its Frobenius norm first); the gradient of
  the ``"plain"`` form equals the package's, whose value leaves out a constant.

Only ``dropout=0`` is supported (random masks cannot be matched), and only
``input_scaling=None`` (the reference does not re-derive its memory when an
input range moves): scale the rows before both models.
"""
from __future__ import annotations

import copy
from typing import Any, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["DenseReferenceSLeDGe"]


class DenseReferenceSLeDGe:
    """Dense, authors-structured SLeDGe with this package's semantics.

    Args:
        model: a :class:`torch_geometric_stream.SLeDGe` whose configuration,
            parameters, optimizer state and memory are copied (the model
            itself is not modified or referenced afterwards).
    """

    def __init__(self, model: Any) -> None:
        if getattr(model.backbone, "dropout", 0.0) != 0.0:
            raise ValueError("the dense reference supports dropout=0 only")
        if model.input_scaling is not None:
            raise ValueError(f"the dense reference takes rows as given, it cannot mirror "
                             f"input_scaling={model.input_scaling!r}: scale the rows "
                             f"outside both models instead")
        self.in_channels = model.in_channels
        self.num_classes = model.num_classes
        self.k = model.k
        self.light = model.light
        self.normalization = model.backbone.normalization
        self.bias_position = model.backbone.bias_position
        self.regularizer = model.regularizer
        self.lam = model.lam
        self.tau = model.tau
        self.merge_similarity = model.merge_similarity
        self.supervise_graph = model.supervise_graph
        self.num_layers = model.backbone.num_layers
        self.embedding_layers = model.graph.embedding.num_layers

        # ---- parameters (same order as model.parameters()) ----
        self.params: dict[str, Tensor] = {
            name: p.detach().clone().requires_grad_(True)
            for name, p in model.named_parameters()
        }
        p = self.params
        self.emb_w = [p[f"graph.embedding.lins.{i}.weight"] for i in range(self.embedding_layers)]
        self.emb_b = [p[f"graph.embedding.lins.{i}.bias"] for i in range(self.embedding_layers)]
        self.conv_w = [p[f"backbone.convs.{i}.lin.weight"] for i in range(self.num_layers)]
        self.conv_b = [p[f"backbone.convs.{i}.bias"] for i in range(self.num_layers)]
        self.ln_w = [p[f"backbone.norms.{i}.weight"] for i in range(self.num_layers - 1)]
        self.ln_b = [p[f"backbone.norms.{i}.bias"] for i in range(self.num_layers - 1)]
        self.optimizer = torch.optim.Adam(list(self.params.values()), lr=model.lr,
                                          weight_decay=model.weight_decay)
        if model.optimizer.state:
            # deep copy: load_state_dict keeps the very same state tensors otherwise
            self.optimizer.load_state_dict(copy.deepcopy(model.optimizer.state_dict()))

        # ---- memory, laid out like the authors' Update_adaptive_EMA ----
        mem = model.memory
        self.alpha, self.beta, self.count_offset = mem.alpha, mem.beta, mem.count_offset
        self.buffer_per_label = mem.slots_per_class
        self.labeled_buffer_size = mem.labeled_size
        self.unlabeled_buffer_size = mem.unlabeled_size
        L = self.labeled_buffer_size
        protos = mem.prototypes.detach().clone()
        counts = mem.counts.detach().clone().to(protos.dtype)
        filled = mem.node_mask.detach().clone()
        self.labeled_bank = protos[:L].clone()
        self.labeled_counts = counts[:L].clone()
        self.labeled_filled = filled[:L].clone()
        self.labeled_age = mem.ages.detach().clone().to(protos.dtype)
        self.static_labels = torch.arange(self.num_classes).repeat_interleave(
            self.buffer_per_label).to(protos.device)
        self.unlabeled_bank = protos[L:].clone()
        self.unlabeled_counts = counts[L:].clone()
        self.unlabeled_filled = filled[L:].clone()
        self.current_count = int(self.unlabeled_filled.sum())

    @classmethod
    def from_config(cls, state_dict: Optional[dict] = None, **kwargs: Any) -> "DenseReferenceSLeDGe":
        """Build from ``SLeDGe`` constructor kwargs (and optionally its ``state_dict``)."""
        from torch_geometric_stream import SLeDGe

        model = SLeDGe(**kwargs)
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return cls(model)

    # ------------------------------------------------------------ modules
    def embed_raw(self, h: Tensor) -> Tensor:
        """``f_E`` before normalization (the authors' ``internal_forward``)."""
        for i, (w, b) in enumerate(zip(self.emb_w, self.emb_b)):
            h = F.linear(h, w, b)
            if i != self.embedding_layers - 1:
                h = F.relu(h)
        return h

    def embed(self, h: Tensor) -> Tensor:
        return F.normalize(self.embed_raw(h), dim=1, p=2)

    def gcn(self, features: Tensor, adj: Tensor) -> Tensor:
        h = features
        for i in range(self.num_layers):
            if self.bias_position == "before":  # nn.Linear, then A_hat (the authors')
                h = torch.mm(adj, F.linear(h, self.conv_w[i], self.conv_b[i]))
            else:
                h = torch.mm(adj, F.linear(h, self.conv_w[i])) + self.conv_b[i]
            if i < self.num_layers - 1:
                h = F.layer_norm(h, (h.size(1),), self.ln_w[i], self.ln_b[i])
                h = F.relu(h)
        return h

    def get_adj(self, features: Tensor, target_index: Optional[Tensor] = None) -> Tensor:
        """Dense normalized adjacency ``(N, N)``; ``target_index`` = the only rows
        that get edges (light mode), ``None`` = every row."""
        n = features.size(0)
        emb = self.embed(features)
        if target_index is None:
            sim = emb @ emb.t()  # (N, N)
        else:
            sim = emb[target_index] @ emb.t()  # (Q, N)
        if not self.supervise_graph:  # edge weights as constants in the loss
            sim = sim.detach()
        valid_k = min(self.k + 1, n)
        indices = sim.detach().topk(valid_k, dim=-1).indices
        mask = torch.zeros_like(sim)
        mask[torch.arange(sim.size(0), device=sim.device).view(-1, 1), indices] = 1.0
        adj_rows = sim * mask
        if target_index is None:
            adj, kept = adj_rows, mask
        else:  # scatter the query rows into a dense (N, N) matrix
            adj = torch.zeros(n, n, dtype=sim.dtype, device=sim.device).index_copy(
                0, target_index, adj_rows)
            kept = torch.zeros(n, n, dtype=sim.dtype, device=sim.device).index_copy(
                0, target_index, mask)
        if self.normalization in ("symmetric", "symmetric-add"):
            # symmetric: add_remaining_self_loops (a kept self-loop keeps its weight,
            # others get 1); symmetric-add: A + I as the paper writes it
            loops = (torch.ones_like(kept.diagonal()) if self.normalization == "symmetric-add"
                     else 1.0 - kept.diagonal())
            adj = adj + torch.diag(loops)
            degree = adj.clamp(min=0.0).sum(dim=1)
            degree = torch.where(degree > 0, degree, torch.ones_like(degree))
            d_inv_sqrt = torch.diag(degree.pow(-0.5))
            return d_inv_sqrt @ adj @ d_inv_sqrt
        if self.normalization == "mean":
            count = kept.sum(dim=1)
            inv = torch.where(count > 0, 1.0 / count.clamp(min=1.0), torch.zeros_like(count))
            return torch.diag(inv) @ adj
        if self.normalization == "none":
            return adj
        raise ValueError(self.normalization)

    def forward(self, features: Tensor, target_index: Optional[Tensor] = None) -> Tensor:
        return self.gcn(features, self.get_adj(features, target_index))

    def reg(self, features: Tensor, target_index: Optional[Tensor] = None) -> Tensor:
        emb = self.embed(features)  # embedded again, as the authors' reg()
        feats = F.normalize(features, dim=1, p=2)
        if target_index is None:
            sim_e, sim_x = emb @ emb.t(), feats @ feats.t()
        else:
            sim_e = emb[target_index] @ emb.t()
            sim_x = features[target_index] @ features.t()
        if self.regularizer == "frobenius":
            sim_e = sim_e / torch.linalg.norm(sim_e)
            sim_x = sim_x / torch.linalg.norm(sim_x)
        return nn.MSELoss()(sim_e, sim_x)

    # ------------------------------------------------------------- memory
    def get_test(self, x: Tensor) -> Tensor:
        return torch.cat([self.labeled_bank[self.labeled_filled],
                          self.unlabeled_bank[self.unlabeled_filled], x], dim=0)

    def get_train(self) -> tuple[Tensor, Tensor, Tensor]:
        return (torch.cat([self.labeled_bank[self.labeled_filled],
                           self.unlabeled_bank[self.unlabeled_filled]], dim=0),
                self.static_labels[self.labeled_filled],
                self.labeled_age[self.labeled_filled])

    def _weight(self, coefficient: Union[str, float], sim: Tensor, count: Tensor) -> Tensor:
        if coefficient != "adaptive":
            return sim.new_tensor(float(coefficient))
        n = (count + self.count_offset).clamp(min=1.0)
        return (1.0 - 1.0 / n) * sim.clamp(min=0.0)

    @torch.no_grad()
    def partial_fit(self, feat: Tensor, label: Optional[int]) -> None:
        """One memory update; ``feat`` ``(d,)`` unit row."""
        if self.merge_similarity == "raw":
            embed = lambda rows: F.normalize(rows, dim=1)  # noqa: E731
        else:
            embed = self.embed
        if label is not None:
            self.labeled_age[self.labeled_filled] += 1
            start = label * self.buffer_per_label
            end = start + self.buffer_per_label
            empty = torch.where(~self.labeled_filled[start:end])[0]
            if len(empty) > 0:
                slot = start + int(empty[0])
                self.labeled_bank[slot] = feat
                self.labeled_counts[slot] = 1
                self.labeled_filled[slot] = True
                self.labeled_age[slot] = 0
                return
            feat_embs = embed(feat.unsqueeze(0))
            embs = embed(self.labeled_bank)  # whole labeled bank, as the authors
            sims = (embs[start:end] @ feat_embs.t()).view(-1)
            rel = int(torch.argmax(sims))
            slot = start + rel
            alpha = self._weight(self.alpha, sims[rel], self.labeled_counts[slot])
            old = self.labeled_bank[slot]
            updated = (1 - alpha) * old + alpha * feat if old.any() else feat  # zero: replace
            self.labeled_bank[slot] = F.normalize(updated, p=2, dim=0)
            self.labeled_counts[slot] += 1
            self.labeled_age[slot] = 0
            return
        if self.unlabeled_buffer_size == 0:
            return
        if self.current_count < self.unlabeled_buffer_size:
            slot = self.current_count
            self.unlabeled_bank[slot] = feat
            self.unlabeled_counts[slot] = 1
            self.unlabeled_filled[slot] = True
            self.current_count += 1
            return
        feat_embs = embed(feat.unsqueeze(0))
        embs = embed(self.unlabeled_bank)
        sims = (embs @ feat_embs.t()).view(-1)
        slot = int(torch.argmax(sims))
        beta = self._weight(self.beta, sims[slot], self.unlabeled_counts[slot])
        old = self.unlabeled_bank[slot]
        updated = beta * old + (1 - beta) * feat if old.any() else feat  # zero: replace
        self.unlabeled_bank[slot] = F.normalize(updated, p=2, dim=0)
        self.unlabeled_counts[slot] += 1

    # ---------------------------------------------------------- stream API
    def _rows(self, x: Any) -> Tensor:
        """Rows ``(n, d)`` in the model's dtype (float32, or float64 for checks)."""
        x = torch.as_tensor(x, dtype=self.labeled_bank.dtype)
        return x.view(1, -1) if x.dim() == 1 else x

    @torch.no_grad()
    def predict_proba(self, x: Any) -> Tensor:
        """Class probabilities ``(n, c)``; rows are handled one at a time."""
        out = []
        for row in self._rows(x):
            features = self.get_test(F.normalize(row.view(1, -1), dim=1))
            n = features.size(0)
            target = torch.tensor([n - 1]) if self.light else None
            out.append(self.forward(features, target)[n - 1])
        return torch.stack(out).softmax(dim=-1)

    def predict(self, x: Any) -> Tensor:
        return self.predict_proba(x).argmax(dim=-1)

    def learn(self, x: Any, y: Any = None) -> "DenseReferenceSLeDGe":
        rows = self._rows(x)
        labels = torch.full((rows.size(0),), -1, dtype=torch.long) if y is None \
            else torch.as_tensor(y).view(-1)
        for row, label in zip(rows, labels.tolist()):
            feat = F.normalize(row, dim=0)
            self.partial_fit(feat, label if label >= 0 else None)
            self.train_step()
        return self

    def train_step(self) -> None:
        num_labeled = int(self.labeled_filled.sum())
        if num_labeled == 0:
            return
        features, labels, ages = self.get_train()
        target = torch.arange(num_labeled) if self.light else None
        preds = self.forward(features, target)
        loss = F.cross_entropy(preds[:num_labeled], labels, reduction="none")
        if self.tau is not None:
            loss = loss * torch.exp(-ages / self.tau)
        loss = loss.mean()
        if self.lam != 0.0:
            loss = loss + self.lam * self.reg(features, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    # ------------------------------------------------------------ helpers
    def memory_state(self) -> dict[str, Tensor]:
        """Memory in the package's slot layout (for comparisons)."""
        return {
            "prototypes": torch.cat([self.labeled_bank, self.unlabeled_bank]),
            "counts": torch.cat([self.labeled_counts, self.unlabeled_counts]).long(),
            "node_mask": torch.cat([self.labeled_filled, self.unlabeled_filled]),
            "ages": self.labeled_age.long(),
        }

    def fill_memory(self, x: Tensor, labeled: Tensor) -> None:
        """Fill every slot directly (benchmarks): ``x`` unit rows, ``labeled``
        ``(L, d)`` rows in slot order."""
        L, U = self.labeled_buffer_size, self.unlabeled_buffer_size
        self.labeled_bank.copy_(labeled[:L])
        self.labeled_counts.fill_(1)
        self.labeled_filled.fill_(True)
        self.labeled_age.zero_()
        self.unlabeled_bank.copy_(x[:U])
        self.unlabeled_counts.fill_(1)
        self.unlabeled_filled.fill_(True)
        self.current_count = U
