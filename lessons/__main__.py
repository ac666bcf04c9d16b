"""``python -m lessons`` lists the lessons; ``python -m lessons N`` steps through lesson N.

In a terminal: Enter for the next step, ``b`` back, ``q`` quit (also ``g K`` to go to step K); a step taller
than the terminal is shown a screen at a time (Enter for more). With stdin not a terminal (a pipe, a file,
CI), every step is printed in order and the program exits 0.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import textwrap

import lessons
from lessons.stepper import Stepper

__all__ = ["main", "interact", "print_all"]

KEYS = "Enter: next step   b: back   g K: go to step K   q: quit"
"""The pager's keys, shown under every step."""


def _width() -> int:
    """The terminal's width (80 when unknown), at most 100 columns."""
    return min(100, shutil.get_terminal_size((80, 24)).columns)


def print_all(stepper: Stepper) -> int:
    """Print every step of the lesson, in order, separated by rules. Returns the number of steps."""
    write = print
    count = 0
    width = _width()
    while True:
        count += 1
        write("=" * width)
        write(stepper.show(width=width - 1, keys=""))
        if isinstance(stepper.next(), str):
            break
    write("=" * width)
    write(f"End of lesson {stepper.number}: {count} steps.")
    return count


def _screen(stepper: Stepper) -> str:
    width = _width()
    return stepper.show(
        width=width - 1, keys=f"Lesson {stepper.number}, step {stepper.index} of {len(stepper)}.  {KEYS}"
    )


MORE = "-- more: Enter   s: the rest of this step   q: quit --"
"""The prompt under each screen of a step taller than the terminal."""


def _show(text: str) -> bool:
    """Print a step; one taller than the terminal a screen at a time, so its heading is read first and
    every screen ends with the keys that go on. Returns False if the reader quit."""
    rows = shutil.get_terminal_size((80, 24)).lines
    room = max(8, rows - 2)  # the screen less the prompt's line and the line typed after it
    lines = text.split("\n")
    while len(lines) > room + 1:
        print("\n".join(lines[:room]))
        lines = lines[room:]
        try:
            reply = input(MORE).strip().lower()
        except (EOFError, KeyboardInterrupt):
            print()
            return False
        if reply in ("q", "quit", "exit"):
            return False
        if reply == "s":
            break
    print("\n".join(lines))
    return True


def _is_key(reply: str) -> bool:
    """A key of the footer (``q``, ``b``, ``g 7``), typed where a prediction was asked."""
    r = reply.strip().lower()
    return r in ("q", "quit", "exit", "b", "back") or (r.startswith("g") and r[1:].strip().isdecimal())


def _ask(stepper: Stepper) -> str | None:
    """Ask the current step's question, if any, and say whether the answer is right.

    Returns:
        A key of the footer typed instead of a number (``q``, ``b``, ``g 7``), for :func:`interact` to act
        on; None otherwise.
    """
    q = stepper.question
    while q is not None:
        try:
            # the question wrapped to the terminal, then a prompt short enough not to wrap
            print(textwrap.fill(f"Predict: {q.text}", width=_width() - 1))
            reply = input("Your prediction (a number; Enter skips; q, b, g K as above) > ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return "q"
        if not reply:
            return None
        if _is_key(reply):
            return reply.lower()
        try:
            value = float(reply)
        except ValueError:
            print(f"{reply!r} is not a number; type one such as 0.25, press Enter to skip, or q, b, g K")
            continue
        print(textwrap.fill(stepper.answer(value), width=_width() - 1))
        return None
    return None


def _move(stepper: Stepper, answer: str) -> str | None:
    """Act on a key: the message of a move that stays put, "" after a move, None for an unknown key."""
    if answer in ("b", "back"):
        moved = stepper.back()
    elif answer.startswith("g") and answer[1:].strip().isdecimal():
        moved = stepper.goto(int(answer[1:].strip()))
    elif answer == "":
        moved = stepper.next()
    else:
        return None
    return moved if isinstance(moved, str) else ""


def interact(stepper: Stepper) -> int:
    """Step through a lesson at a terminal: Enter next, ``b`` back, ``q`` quit, ``g K`` go to step K.

    A step that poses a question asks for a prediction before moving on (Enter skips it); the keys work
    at that prompt too.
    """
    if not _show(_screen(stepper)):
        return 0
    pending = _ask(stepper)
    while True:
        if pending is not None:
            answer, pending = pending, None
        else:
            try:
                answer = input("> ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
        if answer in ("q", "quit", "exit"):
            return 0
        said = _move(stepper, answer)
        if said is None:
            print(KEYS)
        elif said:
            print(said)
            if stepper.at_end and answer == "":
                return 0
        else:
            if not _show("=" * _width() + "\n" + _screen(stepper)):
                return 0
            pending = _ask(stepper)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m lessons [N]``; returns the exit status (2 for a bad lesson number)."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(lessons.list())
        return 0
    if len(args) > 1 and args[0].isdecimal():  # options belong to the command line's lesson
        print(
            f"python -m lessons: takes a lesson number only, not {' '.join(args[1:])!r}; for your own "
            f"expression run: {shlex.join(['micrograph', 'lesson', *args])}",
            file=sys.stderr,
        )
        return 2
    if len(args) != 1 or not args[0].isdecimal() or int(args[0]) not in lessons.LESSONS:
        print(
            f"python -m lessons: no lesson {' '.join(args)!r}; choose one of "
            f"{', '.join(map(str, lessons.LESSONS))} (python -m lessons lists them)",
            file=sys.stderr,
        )
        return 2
    stepper = lessons.start(int(args[0]))
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interact(stepper)
    print_all(stepper)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader went away (python -m lessons 2 | head): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
