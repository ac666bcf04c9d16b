"""The lessons printed and paged in a terminal: no REPL calls in print, the pager's keys on every screen, a
tall step a screen at a time, the prediction prompt taking the keys its footer shows."""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import re

import pytest

import lessons

# --- item 15 and the pager ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_printed_lessons_do_not_offer_repl_calls(n: int, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import main

    monkeypatch.setenv("COLUMNS", "80")
    assert main([str(n)]) == 0
    out = capsys.readouterr().out
    prose = [ln for ln in out.splitlines() if not ln.startswith(" ")]  # text, not code or tables
    assert not [ln for ln in prose if "l.next()" in ln or "l.restart()" in ln or "l.back()" in ln]
    assert max(len(ln) for ln in prose) <= 80, max(prose, key=len)


def test_pager_shows_its_keys_on_every_screen_and_asks_for_predictions(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import KEYS, interact

    monkeypatch.setenv("COLUMNS", "80")
    l = lessons.start(2)
    q_step = next(k for k in range(1, len(l) + 1) if l.goto(k) and l.question is not None)
    l.restart()
    # Enter through the steps; at the question answer "abc" (not a number), then a wrong value
    expected = None
    replies: list[str] = []

    def fake_input(prompt: str) -> str:
        nonlocal expected
        if prompt.startswith("Your prediction"):
            if "abc" not in replies:
                replies.append("abc")
                return "abc"
            expected = l.question.expected  # type: ignore[union-attr]
            return "0.123456789"  # a wrong prediction: its message is the longest, wrapped to the terminal
        if l.index == 3 and "g" not in replies:
            replies.append("g")
            return "g 1"
        return ""

    monkeypatch.setattr("builtins.input", fake_input)
    assert interact(l) == 0
    out = capsys.readouterr().out
    screens = out.count("Lesson 2: ")
    assert screens >= len(l) and out.count(KEYS) == screens
    assert "'abc' is not a number" in out
    assert expected is not None and "Not quite: the answer is " in out
    assert f"step {q_step} of {len(l)}" in out
    assert "l.next()" not in out
    prose = [ln for ln in out.splitlines() if not ln.startswith(" ")]
    assert max(len(ln) for ln in prose) <= 80


def test_pager_shows_a_tall_step_a_screen_at_a_time_in_an_80x24_terminal(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No screen is taller than the terminal, each starts where the last stopped (the step's heading on
    the first), and each ends with a prompt that says how to go on; q at that prompt quits."""
    import os

    from lessons.__main__ import KEYS, MORE, interact

    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=(80, 24): os.terminal_size((80, 24)))
    l = lessons.start(6)
    screens: list[str] = []
    more = 0

    def fake_input(prompt: str) -> str:
        nonlocal more
        screens.append(capsys.readouterr().out)
        if prompt == MORE:
            more += 1
            return "q" if more == 6 else ""  # read five tall screens, then quit at the sixth
        return ""

    monkeypatch.setattr("builtins.input", fake_input)
    assert interact(l) == 0
    screens.append(capsys.readouterr().out)
    for screen in screens:
        assert len(screen.rstrip("\n").splitlines()) <= 23, screen  # 24 rows less the prompt's
    firsts = [k for k, s in enumerate(screens) if "Lesson 6: Symbol-to-symbol" in s]
    assert len(firsts) >= 3 and more == 6
    for k in firsts:  # a step's first screen shows its heading at the top, not scrolled off
        assert re.search(r"^Step \d+: ", screens[k], re.M)
    assert any(KEYS in s for s in screens) and l.index < len(l)  # q at a "more" prompt quit early


@pytest.mark.parametrize("n", [1, 2, 6])
def test_the_prediction_prompt_takes_the_keys_its_footer_shows(n: int, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import MORE, interact

    monkeypatch.setenv("COLUMNS", "80")
    l = lessons.start(n)
    q_step = next(k for k in range(1, len(l) + 1) if l.goto(k) and l.question is not None)
    for keys, after in [(["q"], q_step), (["b", "q"], q_step - 1), (["g 1", "q"], 1), (["QUIT"], q_step)]:
        l.restart()
        typed = list(keys)
        asked = []

        def fake_input(prompt: str, typed: list[str] = typed, asked: list[str] = asked) -> str:
            if prompt == MORE:  # a step taller than the terminal: show the rest of it
                return "s"
            if prompt.startswith("Your prediction") and not asked:
                asked.append(prompt)
                return typed.pop(0)  # a key typed where a number is asked: acted on, not refused
            if l.index < q_step and not asked:
                return ""
            return typed.pop(0) if typed else "q"

        monkeypatch.setattr("builtins.input", fake_input)
        assert interact(l) == 0
        out = capsys.readouterr().out
        assert asked and "is not a number" not in out, (keys, out[-400:])
        assert l.index == after, keys


def test_pager_takes_g_and_a_digit_that_is_no_number_as_an_unknown_key(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import KEYS, MORE, interact

    monkeypatch.setenv("COLUMNS", "80")
    keys = iter(["g ¹", "q"])  # a digit to str.isdigit, not a number to int()
    asked: list[str] = []

    def fake_input(prompt: str) -> str:
        asked.append(prompt)
        if prompt == MORE:
            return "s"  # the rest of a tall step at once
        return "" if prompt.startswith("Your prediction") else next(keys)

    monkeypatch.setattr("builtins.input", fake_input)
    assert interact(lessons.start(1)) == 0
    assert asked.count("> ") == 2 and capsys.readouterr().out.rstrip().endswith(KEYS)
