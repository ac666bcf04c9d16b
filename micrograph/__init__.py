"""micrograph: back-propagation as section 6.5 of *Deep Learning* writes it, on scalars, made visible.

The engine implements the book's algorithms and nothing else:

* :class:`Value`, the node u(i) (``micrograph.engine``), with micrograd's surface;
* the operation table, one definition per operation (``micrograph.ops``);
* :class:`Graph`, the ordered node list u(1)..u(n) with Algorithm 6.1 (``forward``) and 6.2 (``backprop``);
* :func:`grad`, symbol-to-symbol back-propagation (Algorithms 6.5/6.6) and higher-order derivatives.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, MIT Press, section 6.5.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from micrograph.backprop import BackpropStep, GradTable, Term, backprop
from micrograph.engine import Value
from micrograph.errors import DomainError
from micrograph.forward import forward
from micrograph.graph import Graph, SubGraph
from micrograph.memory import paused_gc
from micrograph.symbolic import BuildGradCall, build_grad, grad, hessian_vector_product

__all__ = [
    "Value",
    "Graph",
    "SubGraph",
    "DomainError",
    "GradTable",
    "Term",
    "BackpropStep",
    "BuildGradCall",
    "forward",
    "backprop",
    "grad",
    "build_grad",
    "hessian_vector_product",
    "jvp",
    "JVP",
    "jacobian_forward",
    "jacobian_reverse",
    "naive_grad",
    "store_grad",
    "checkpoint_grad",
    "compile_graph",
    "CompiledGraph",
    "paused_gc",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from micrograph import datasets as datasets
    from micrograph import nn as nn
    from micrograph.checkpoint import checkpoint_grad
    from micrograph.compile import CompiledGraph, compile_graph
    from micrograph.forward_mode import JVP, jacobian_forward, jacobian_reverse, jvp
    from micrograph.naive import naive_grad
    from micrograph.store import store_grad

# The modules a first `import micrograph` does not need are imported on first use (PEP 562): the
# networks, losses and training loop (nn), the data sets, the compiler, the naive chain rule and
# checkpointing, forward mode. `micrograph.nn`, `from micrograph import compile_graph` and
# `micrograph.datasets` work as if they had been imported.
_LAZY = {
    "nn": ("micrograph.nn", None),
    "datasets": ("micrograph.datasets", None),
    "compile_graph": ("micrograph.compile", "compile_graph"),
    "CompiledGraph": ("micrograph.compile", "CompiledGraph"),
    "naive_grad": ("micrograph.naive", "naive_grad"),
    "store_grad": ("micrograph.store", "store_grad"),
    "checkpoint_grad": ("micrograph.checkpoint", "checkpoint_grad"),
    "jvp": ("micrograph.forward_mode", "jvp"),
    "JVP": ("micrograph.forward_mode", "JVP"),
    "jacobian_forward": ("micrograph.forward_mode", "jacobian_forward"),
    "jacobian_reverse": ("micrograph.forward_mode", "jacobian_reverse"),
}


def __getattr__(name: str) -> Any:
    """A lazily imported submodule or name of ``micrograph`` (PEP 562), imported and kept on first use.

    Raises:
        AttributeError: for a name micrograph does not have.
    """
    if name not in _LAZY:
        raise AttributeError(f"module 'micrograph' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
