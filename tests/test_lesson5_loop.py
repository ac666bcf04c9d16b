"""Lesson 5 trains with micrograph's own minibatch SGD (nn.train), and shows its lines as the code that ran.

The lines shown under "Code that ran" are nn.train's: its batch step (forward, loss, zero the gradients,
J.backward()) and its update; the lesson's numbers are nn.train's on the same data and seeds, bit for
bit. One λ in the whole lesson.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import lessons
import lessons.l5_mlp as l5
from lessons.cli import main
from micrograph import nn
from viz.words import fmt


@pytest.fixture(autouse=True)
def _short_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(l5, "EPOCHS", 3)


def _at_training() -> lessons.Stepper:
    l = lessons.start(5)  # noqa: E741 - the student's name for the stepper
    l.goto(4)
    assert "Training" in l.step.title
    return l


def test_the_code_shown_is_nn_trains_sgd() -> None:
    l = _at_training()  # noqa: E741
    code = l.code
    for line in ("# micrograph/train.py, lines", "J, correct = _objective(", "p.grad = 0.0", "J.backward()",
                 "p.data -= eps * p.grad", "history.loss.append(total / batches)"):  # fmt: skip
        assert line in code, line
    assert "memo" not in code and "l." not in code  # micrograph's lines, not the lesson's plumbing
    assert f"→ history.loss[-1] = {fmt(l.history.loss[-1])}" in code  # this run's mean J
    assert all(len(line) <= 76 for line in code.splitlines())  # fits an 80-column terminal as shown
    assert "nn.train(" in l.step.lesson_code  # the step's own code, to type in the REPL


def test_the_lessons_training_is_nn_trains_bit_for_bit() -> None:
    l = _at_training()  # noqa: E741
    model = nn.MLP(4, [l5.HIDDEN, 3], activation="tanh", seed=0)
    history = nn.train(model, l.train, loss="cross_entropy", lr=l5.LR, epochs=l5.EPOCHS,
                       batch_size=l5.BATCH, l2=l5.LAMBDA, seed=0, progress=False)  # fmt: skip
    assert len(l.history.loss) == l5.EPOCHS
    assert l.history.loss == history.loss
    assert [p.data for p in l.net.parameters()] == [p.data for p in model.parameters()]
    # the numbers the student reads are those of this run
    assert nn.accuracy(model, l.test) == l.history.test_accuracy[-1]
    assert f"{l.history.loss[-1]:#.4g}" in l.text


def test_the_loop_runs_once_per_lesson_and_replays_restore_it() -> None:
    l = _at_training()  # noqa: E741
    net, history = l.net, l.history
    l.back()
    l.next()
    assert l.net is net and l.history is history
    l.next()
    assert f"accuracy {nn.accuracy(net, l.test):.3f}" in l.text


def test_one_lambda_in_every_step_of_lesson_5() -> None:
    l = lessons.start(5)  # noqa: E741
    said = []
    while True:
        said += re.findall(r"(?:lambda|λ) = ([0-9.e-]+)", l.text)
        if isinstance(l.next(), str):
            break
    assert said and {float(x) for x in said} == {l5.LAMBDA}


def test_the_shell_command_the_lesson_names_trains_to_the_lesson_s_numbers(tmp_path: Path) -> None:
    """Lesson 5 names the ``micrograph train`` command that runs the same from the shell: run as said, it
    ends at the lesson's J and accuracies (the same split, network, epochs and lambda; the command compiles
    its step, so J may differ in the last bits)."""
    l = lessons.start(5)  # noqa: E741
    while not isinstance(l.next(), str) and "runs the same from the shell" not in l.text:
        pass
    said = re.search(r"micrograph (train .*?) runs the same from the shell", " ".join(l.text.split()))
    assert said is not None, l.text
    argv = said.group(1).split()
    assert argv[argv.index("--out") + 1] == "iris/"
    argv[argv.index("--out") + 1] = str(tmp_path / "iris")
    assert main([*argv, "--quiet"]) == 0
    summary = json.loads((tmp_path / "iris" / "summary.json").read_text())
    h = l.history
    assert summary["epochs"] == l5.EPOCHS == len(h.loss)
    assert summary["train_loss"] == pytest.approx(h.loss[-1], rel=1e-12)
    assert summary["test_accuracy"] == h.test_accuracy[-1] == l.test_accuracy
