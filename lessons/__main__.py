"""``python -m lessons`` lists the lessons; ``python -m lessons N`` steps through lesson N.

In a terminal: Enter for the next step, ``b`` back, ``q`` quit (also ``g K`` to go to step K). With stdin not
a terminal (a pipe, a file, CI), every step is printed in order and the program exits 0.
"""

from __future__ import annotations

import sys

import lessons
from lessons._core import Stepper

__all__ = ["main", "interact", "print_all"]

PROMPT = "[Enter] next  b back  q quit > "


def print_all(stepper: Stepper) -> int:
    """Print every step of the lesson, in order, separated by rules. Returns the number of steps."""
    write = print
    count = 0
    while True:
        count += 1
        write("=" * 100)
        write(stepper.show())
        if isinstance(stepper.next(), str):
            break
    write("=" * 100)
    write(f"End of lesson {stepper.number}: {count} steps.")
    return count


def interact(stepper: Stepper) -> int:
    """Step through a lesson at a terminal: Enter next, ``b`` back, ``q`` quit, ``g K`` go to step K."""
    print(stepper.show())
    while True:
        try:
            answer = input(PROMPT).strip().lower()
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if answer in ("q", "quit", "exit"):
            return 0
        if answer in ("b", "back"):
            moved = stepper.back()
        elif answer.startswith("g") and answer[1:].strip().isdigit():
            moved = stepper.goto(int(answer[1:].strip()))
        elif answer == "":
            moved = stepper.next()
        else:
            print("Enter: next step, b: back, g K: go to step K, q: quit")
            continue
        if isinstance(moved, str):
            print(moved)
            if stepper.at_end and answer == "":
                return 0
        else:
            print("\n" + "=" * 100)
            print(stepper.show())


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m lessons [N]``; returns the exit status (2 for a bad lesson number)."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(lessons.list())
        return 0
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) not in lessons.LESSONS:
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
