"""The templates ``micrograph exercise start NAME`` writes (and the page's editor shows, in the page's words):
the signature, the book's pseudo-code as comments, and TODOs. Each starts with the marker line ``# micrograph
exercise: NAME``, which tells ``check`` what the file is.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from micrograph.pseudocode import ALGORITHMS

__all__ = ["TEMPLATES", "LESSONS", "PLACES", "template"]

LESSONS: dict[str, int] = {
    "derivatives": 2,
    "topo": 1,
    "forward": 1,
    "backprop": 2,
    "build_grad": 6,
    "mlp_backward": 5,
    "naive": 3,
}
"""{exercise: the lesson that steps through the algorithm the student then writes}."""

_DERIVATIVES = '''\
# micrograph exercise: derivatives
"""Local derivatives: du/dx_k for six operations, the factor ∂u(i)/∂u(j) of each term of Algorithm 6.2.

Each function gets the argument values and the operation's own output `out` (u itself), as the
rules of micrograph's operation table do: some derivatives are simplest written with `out`.

The book (section 6.5.3, Algorithm 6.2): "Each ∂u(i)/∂u(j) is a function of the parents u(j) of u(i)".

@SEE@
@CHECK@
"""
import math


def tanh_dx(x, out):
    """u = tanh(x), out = tanh(x): return du/dx."""
    raise NotImplementedError  # TODO


def sigmoid_dx(x, out):
    """u = sigmoid(x) = 1 / (1 + exp(-x)), out = sigmoid(x): return du/dx."""
    raise NotImplementedError  # TODO


def div_dx(x, y, out):
    """u = x / y: return du/dx (y != 0)."""
    raise NotImplementedError  # TODO


def div_dy(x, y, out):
    """u = x / y: return du/dy (y != 0)."""
    raise NotImplementedError  # TODO


def pow_dx(x, y, out):
    """u = x ** y (x > 0): return du/dx."""
    raise NotImplementedError  # TODO


def pow_dy(x, y, out):
    """u = x ** y (x > 0): return du/dy."""
    raise NotImplementedError  # TODO


def log_dx(x, out):
    """u = log(x) (x > 0): return du/dx."""
    raise NotImplementedError  # TODO


def sqrt_dx(x, out):
    """u = sqrt(x) (x > 0): return du/dx."""
    raise NotImplementedError  # TODO
'''

_TOPO = '''\
# micrograph exercise: topo
"""The ordered node list u(1)..u(n): every node after its parents, the n_i leaves first, z last.

The book (section 6.5.3): "We will assume that the nodes of the graph have been ordered in such a way
that we can compute their output one after the other, starting at u(n_i+1) and going up to u(n)."
Algorithm 6.1 sets the inputs first: for i = 1, ..., n_i do u(i) <- x_i.

A node is a micrograph Value: node.inputs is the tuple of its parents Pa(u) in argument order (a * a has
the same parent twice); node.op is None for a leaf (an input or a constant).

The checker's graphs include a chain 2,000 nodes deep: Python allows about 1,000 nested calls.

@SEE@
@CHECK@
"""


def topological_order(z):
    """Return a list of every node z depends on (z included), each once: leaves first, z last."""
    # TODO: a depth-first search from z that emits a node after all its parents have been emitted.
    #       Remember the nodes already seen: a shared node is reached by several paths.
    # TODO: then put the leaves (node.op is None) first.
    raise NotImplementedError
'''

_FORWARD = '''\
# micrograph exercise: forward
"""Algorithm 6.1, forward propagation over the ordered node list u(1)..u(n).

The book (section 6.5.3, Algorithm 6.1):

@ALGORITHM_6_1@

Here positions are 0-based: G.nodes[0] is u(1), G.nodes[n - 1] is u(n); G.n_inputs is n_i.
G.parents[i] is the tuple of positions j of the parents of G.nodes[i], in argument order.
G.nodes[i].op.f is f(i) on numbers: G.nodes[i].op.f(2.0, 3.0) for a two-argument operation.
Return the whole list u (the checker reads every u(i)), and leave the nodes as they are: do not
assign node.data (the graph is shared with whoever called you).

@SEE@
@CHECK@
"""


def forward(G, x):
    """Return the list u of the values of u(1)..u(n) for the inputs x (a list of n_i numbers)."""
    n = len(G.nodes)
    u = [None] * n
    # TODO: lines 1-3, the inputs.
    # TODO: lines 4-7, every other node in order, from the values in u.
    raise NotImplementedError
'''

_BACKPROP = '''\
# micrograph exercise: backprop
"""Algorithm 6.2, back-propagation with the grad_table.

The book (section 6.5.3, Algorithm 6.2):

@ALGORITHM_6_2@

Return the grad_table for every node of G (a dict {node: du(n)/dnode}).

Positions are 0-based: G.nodes[0] is u(1), G.nodes[n - 1] is u(n). G.get_consumers(node) lists the
nodes u(i) that take node as an argument (each once); node.inputs is a node's arguments in order: a
consumer may take the same node twice (a * a), at positions k = 0 and k = 1.
tools.local_derivative(C, k) is du(C)/d(argument k of C) at the stored values: the operation table's
rule, counted (the checker compares the count with the number of edges).
Leave the nodes as they are (do not assign node.grad: that is micrograd's backward(), not the book's).

@SEE@
@CHECK@
"""
from lessons.exercises import tools


def backprop(G):
    """Return grad_table: {node: du(n)/dnode} for every node of G."""
    nodes = G.nodes
    n = len(nodes)
    grad_table = {}
    grad_table[nodes[n - 1]] = 1.0
    # TODO: the loop over j, from u(n-1) down to u(1).
    # TODO: each entry is a sum of one term per edge out of nodes[j].
    raise NotImplementedError
'''

_BUILD_GRAD = '''\
# micrograph exercise: build_grad
"""Algorithm 6.6, build_grad: symbol-to-symbol back-propagation. The result is a node of B, not a number.

Algorithm 6.6 (section 6.5.6), in words: to build the gradient of z with respect to V,
  - if V is already in grad_table, return grad_table[V];
  - for each consumer C of V in G' (get_consumers(V, G')):
        op = get_operation(C);  D = build_grad(C, G, G', grad_table)
        G(i) = op.bprop(get_inputs(C, G'), V, D)
  - G = the sum of the G(i); grad_table[V] = G; return G.
The checker calls it as Algorithm 6.5 does: grad_table[z] <- 1, then build_grad(V, G, G', grad_table)
for each V in the target set T.

In micrograph: G_prime.get_consumers(V); C.op; C.inputs; and op.bprop(C.inputs, V, D, C), whose last
argument is C itself (tanh's rule reuses the node's output). op.bprop returns a node (or None when every
local derivative is exactly 0). Everything here is a Value node: add the terms with +, never read .data,
so that B can be evaluated again for new inputs and differentiated again. Leave G's nodes as they are.

@SEE@
@CHECK@
"""


def build_grad(V, G, G_prime, grad_table):
    """Return the node dz/dV of B, and store it in grad_table[V]."""
    # TODO
    raise NotImplementedError
'''

_MLP = '''\
# micrograph exercise: mlp_backward
"""Algorithm 6.4, the backward pass of an MLP on numbers, layer by layer.

The book (section 6.5.4, Algorithm 6.4):

@ALGORITHM_6_4@

net holds one example's forward pass (Algorithm 6.3) as numbers, indexed as the book does (k = 1..l;
index 0 of W, b, a is unused):
    net.l            the number of layers
    net.W[k][m][i]   the weight of layer k from unit i of h(k-1) to unit m of h(k)
    net.b[k][m], net.a[k][m], net.h[k][m]   (net.h[0] is x)
    net.g            grad_yhat J, one number per output
    net.lam          lambda; Omega(theta) = the sum of the squares of the weights (not the biases)
    net.f_prime(k, a, h)   f'(a) for layer k's activation at a (whose activation is h)
Return (grad_W, grad_b): dicts {k: ...} with grad_W[k] shaped like W[k], grad_b[k] like b[k].

@SEE@
@CHECK@
"""


def backward_mlp(net):
    """Return (grad_W, grad_b) for every layer k = 1..l."""
    grad_W, grad_b = {}, {}
    g = list(net.g)
    # TODO: the loop over k from l down to 1, the four lines of the book.
    raise NotImplementedError
'''

_NAIVE = '''\
# micrograph exercise: naive
"""The naive chain rule of equation 6.53: dz/dw as a sum over paths, every subexpression recomputed.

The book (section 6.5.2, figure 6.9): for x = f(w), y = f(x), z = f(y),
    dz/dw = f'(y) f'(x) f'(w)                (6.52: values stored; back-propagation)
          = f'(f(f(w))) f'(f(w)) f'(w)       (6.53: "f(w) is recomputed each time it is needed")

Write 6.53 for any graph: D(w) = 1, and for a node u that depends on w,
    D(u) = sum over the arguments x_k of u that depend on w of  du/dx_k * D(x_k).
For each such argument k: recompute u's argument values from the leaves (a leaf's value is
leaf.data; every other value is recomputed with tools.evaluate(node, argument_values)), recompute u
itself (out = tools.evaluate(u, args)), then evaluate du/dx_k once with
tools.local_derivative(u, k, args, out). Read no .data of a node that is not a leaf.
Both tools count: the checker compares your counts with the closed forms for figure 6.9's chain
(d local derivatives, d(d + 1)/2 recomputations) and for a ladder whose paths double at every level.

@SEE@
@CHECK@
"""
from lessons.exercises import tools


def naive_grad(z, w):
    """Return dz/dw, a number, by the naive chain rule (recursion is fine: these graphs are shallow)."""
    # TODO
    raise NotImplementedError
'''


def _quote(text: str) -> str:
    """Put the book's pseudo-code, transcribed once in :mod:`micrograph.pseudocode`, into a template."""
    for number, algorithm in ALGORITHMS.items():
        lines = algorithm.lines[3:] if number == "6.2" else algorithm.lines  # 6.2 from grad_table[u(n)] <- 1
        quoted = "\n".join("    " + line for line in lines)
        text = text.replace(f"@ALGORITHM_{number.replace('.', '_')}@", quoted)
    return text


PLACES: dict[str, tuple[str, str]] = {
    "terminal": (
        "Lesson {lesson} steps through it first:  python -m lessons {lesson}",
        "Check with:  micrograph exercise check {name}.py",
    ),
    "page": (
        "Lesson {lesson} steps through it first: choose it in the Lessons tab.",
        "Check with the Check button above this editor.",
    ),
}
"""Where a template is read, and its two lines that name what the student has there: the command line, or
the page's own controls."""


def template(name: str, place: str = "terminal") -> str:
    """The template of exercise ``name`` as read at ``place`` (a key of :data:`PLACES`).

    Raises:
        KeyError: an unknown exercise or place.
    """
    see, check = PLACES[place]
    lesson = LESSONS[name]
    return (
        _SOURCES[name].replace("@SEE@", see.format(lesson=lesson)).replace("@CHECK@", check.format(name=name))
    )


_SOURCES: dict[str, str] = {
    name: _quote(text)
    for name, text in [
        ("derivatives", _DERIVATIVES),
        ("topo", _TOPO),
        ("forward", _FORWARD),
        ("backprop", _BACKPROP),
        ("build_grad", _BUILD_GRAD),
        ("mlp_backward", _MLP),
        ("naive", _NAIVE),
    ]
}

TEMPLATES: dict[str, str] = {name: template(name) for name in _SOURCES}
"""{exercise name: the template's text, as ``micrograph exercise start NAME`` writes it}."""
