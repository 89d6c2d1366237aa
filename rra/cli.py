"""What the console commands (rra-kg, rra-export, python -m rra.eval.compare) share."""
from __future__ import annotations

import sys
from typing import Callable


def run_command(prog: str, command: Callable[[], int | None], expected: tuple[type[BaseException], ...]) -> int:
    """Run a command's body. The errors it `expected` (bad input: a missing file, a malformed KG)
    print `prog: error: message` and exit 2; anything else is a bug and keeps its traceback."""
    try:
        return command() or 0
    except expected as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
