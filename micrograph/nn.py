"""Neural networks, as micrograd names them: ``from micrograph.nn import MLP, train`` gathers the modules
(:mod:`micrograph.mlp`), the book's Algorithms 6.3 and 6.4 (:mod:`micrograph.mlp_forward`,
:mod:`micrograph.mlp_backward`), the losses (:mod:`micrograph.losses`) and training (:mod:`micrograph.train`)
in one namespace.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.1-6.5 and 8.3.
"""

from micrograph.losses import LOSSES, binary_cross_entropy, cross_entropy, hinge, l1, l2, mse
from micrograph.mlp import ACTIVATIONS, INITS, MLP, ROLES, Layer, Module, Neuron, tag, weights
from micrograph.mlp_backward import backward_mlp
from micrograph.mlp_forward import (
    CostDefinition,
    MinibatchForward,
    MLPForward,
    forward_minibatch,
    forward_mlp,
)
from micrograph.train import History, TrainingError, accuracy, predict, train

__all__ = [
    "ACTIVATIONS",
    "INITS",
    "LOSSES",
    "ROLES",
    "MLP",
    "CostDefinition",
    "History",
    "Layer",
    "MLPForward",
    "MinibatchForward",
    "Module",
    "Neuron",
    "TrainingError",
    "accuracy",
    "backward_mlp",
    "binary_cross_entropy",
    "cross_entropy",
    "forward_minibatch",
    "forward_mlp",
    "hinge",
    "l1",
    "l2",
    "mse",
    "predict",
    "tag",
    "train",
    "weights",
]
