"""``micrograph train DATA``: an MLP trained by minibatch SGD (Algorithms 6.3 and 6.4), its curves drawn.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithms 6.3 and 6.4.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from lessons.cli.common import (
    Parser,
    force_option,
    hidden_option,
    integer,
    new_files,
    out_option,
    output_dir,
    quiet_option,
    real,
    seed_option,
)

__all__ = ["add", "run", "DATASETS", "MAX_HIDDEN"]

DATASETS = ("iris", "wine", "moons", "circles")

MAX_HIDDEN = 2048
"""The widest hidden layer ``train`` builds: each unit is a Python object per weight, and each example's
forward pass adds a node per weight, so wider layers take minutes per epoch and gigabytes."""


def add(tr: Parser) -> None:
    """Declare ``train``'s arguments."""
    tr.add_argument("data", choices=DATASETS, help="the data set")
    hidden_option(tr, MAX_HIDDEN)
    tr.add_argument("--epochs", type=integer(1, 1_000_000), default=100, help="epochs (default 100)")
    tr.add_argument("--lr", type=real(0.0, above=True), default=0.1, help="learning rate (default 0.1)")
    tr.add_argument(
        "--batch-size", type=integer(1, 1_000_000), default=16, help="minibatch size (default 16)"
    )
    tr.add_argument(
        "--l2", type=real(0.0, above=False), default=1e-4, help="weight decay lambda (default 1e-4)"
    )
    seed_option(tr, 2**63 - 1, "seed for the split, the weights and the shuffling")
    out_option(tr, "output directory (created if missing)")
    force_option(tr, "overwrite earlier results in --out")
    tr.add_argument(
        "--no-compile",
        action="store_true",
        help="back-propagate through the Value graph each step instead of the compiled replay "
        "(same numbers, slower)",
    )
    quiet_option(tr)


def outputs(data: str) -> list[str]:
    """The files ``train DATA --out DIR`` writes into DIR, in the order it writes them."""
    return ["loss.png"] + (["boundary.png"] if data in ("moons", "circles") else []) + ["summary.json"]


def run(args: argparse.Namespace) -> int:
    """Train, print the accuracies and write the files; 0, or a UserError for an output refused.

    The files are created exclusively unless --force: one made while the network trains is not replaced,
    and those written before it are removed again (the command exits 2 having changed nothing).
    """
    from micrograph import datasets, nn

    out = output_dir(args.out, args.force, outputs(args.data)) if args.out is not None else None
    X, y = getattr(datasets, args.data)()
    train, test = datasets.split(X, y, test_fraction=0.3, seed=args.seed)
    train, test = datasets.standardize(train, test)
    classes = len(set(y))
    model = nn.MLP(len(X[0]), [args.hidden, classes], activation="tanh", seed=args.seed)
    t0 = time.perf_counter()
    history = nn.train(
        model,
        train,
        loss="cross_entropy",
        lr=args.lr,
        epochs=args.epochs,
        batch_size=args.batch_size,
        l2=args.l2,
        seed=args.seed,
        test=test,
        progress=not args.quiet and sys.stderr.isatty(),
        compile=not args.no_compile,
    )
    seconds = time.perf_counter() - t0
    summary = {
        "data": args.data,
        "examples": {"train": len(train[0]), "test": len(test[0])},
        "model": f"MLP({len(X[0])}, [{args.hidden}, {classes}]), tanh hidden layer, softmax cross-entropy",
        "epochs": history.epochs,
        "train_loss": history.loss[-1],
        "train_accuracy": nn.accuracy(model, train),
        "test_accuracy": nn.accuracy(model, test),
        "seconds": round(seconds, 2),
    }
    print(f"{args.data}: {summary['model']}, {history.epochs} epochs in {seconds:.1f} s")
    print(
        f"  final training loss {summary['train_loss']:.4f}, training accuracy "
        f"{summary['train_accuracy']:.3f},\n  held-out accuracy {summary['test_accuracy']:.3f} "
        f"({len(test[0])} examples never trained on)"
    )
    if out is not None:
        for p in _write(args.data, out, args.force, model, history, test, summary):
            print(f"wrote {p}")
    return 0


def _write(
    data: str, out: Path, force: bool, model: Any, history: Any, test: Any, summary: dict[str, Any]
) -> list[Path]:
    """loss.png, for 2-D data boundary.png, and summary.json into ``out``, all or none (without force)."""
    import viz

    Xt, yt = test
    with new_files(force) as keep:
        loss = viz.plot_training(history, None, title=f"{data}: training")
        written = [keep(viz.save(loss, out / "loss.png", overwrite=force))]
        if len(Xt[0]) == 2:
            boundary = viz.plot_decision_boundary(model, Xt, yt, None, title=f"{data}: decision boundary")
            written.append(keep(viz.save(boundary, out / "boundary.png", overwrite=force)))
        text = json.dumps(summary, indent=2) + "\n"
        written.append(keep(viz.write_atomic(out / "summary.json", text.encode("utf-8"), overwrite=force)))
    return written
