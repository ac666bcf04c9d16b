"""``micrograph lesson [N]``: list the lessons, or step through one, on its example or your expression.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys

from lessons.cli.common import Parser, UserError, at_option

__all__ = ["add", "run"]


def add(le: Parser) -> None:
    """Declare ``lesson``'s arguments."""
    le.add_argument("number", type=int, nargs="?", metavar="N", help="the lesson number")
    le.add_argument(
        "--expr",
        metavar="EXPRESSION",
        help='run lesson 1, 2, 6 or 7 on your own expression, e.g. "x*y + exp(x)" (--at for each variable)',
    )
    at_option(le, "the value of a variable of --expr")


def run(args: argparse.Namespace) -> int:
    """List the lessons or step through one; 0, or a UserError for no such lesson or a misplaced --at."""
    import lessons
    from lessons.__main__ import interact, print_all
    from lessons.__main__ import main as lessons_main

    if args.number is None:
        print(lessons.list())
        return 0
    if args.number not in lessons.LESSONS:
        raise UserError(
            f"there is no lesson {args.number}; the lessons are {', '.join(map(str, lessons.LESSONS))}"
        )
    if args.expr is None:
        if args.at:
            raise UserError("--at needs --expr: the values are for the variables of your expression")
        return lessons_main([str(args.number)])
    from micrograph.errors import DomainError
    from micrograph.expr import ExprError, bind, parse_bindings

    env = bind(args.expr, parse_bindings(args.at))
    try:
        stepper = lessons.start(args.number, expr=args.expr, at=env)
    except (DomainError, ExprError):
        raise
    except ValueError as e:  # a lesson that takes no expression, or none like this one, says so
        raise UserError(str(e)) from None
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interact(stepper)
    print_all(stepper)
    return 0
