"""The command-line reference page (docs/cli.md), generated from `launch.cli.build_parser()`.

    python -m launch.cli_reference > docs/cli.md

Every command and every flag comes from the argparse parser itself, so the page cannot
disagree with `sog COMMAND --help`; each command gets one example (a few for `sog bench`,
one per benchmark) from EXAMPLES below. tests/test_docs.py checks that the committed page
equals this module's output and that every command has an example.
"""

from __future__ import annotations

import argparse
import re
import sys

# One example per command (several for `bench`: one per benchmark), in the order shown.
EXAMPLES: dict[str, list[str]] = {
    "solve": [
        "sog solve --game leduc_poker --iterations 1000 --out leduc.json",
        "sog solve --game 'kuhn_poker(players=3)' --algorithm external --iterations 10000 --out kuhn3.json",
    ],
    "exploitability": [
        "sog exploitability --game leduc_poker --policy leduc.json",
        "sog exploitability --game kuhn_poker --agent sog --search 10,1 --value oracle --seeds 2",
    ],
    "bench": [
        "sog bench cfr --game leduc_poker --target-mbb 1",
        "sog bench search --game leduc_poker --search 100,1 --searches 10",
        "sog bench holdem --street river --iterations 1000",
        "sog bench selfplay --config kuhn --seconds 60",
        "sog bench rules",
        "sog bench network --config leduc --batches 1,64,4096",
        "sog bench multiplayer --game kuhn_poker --players 3 --seconds 30",
        "sog bench modicum --config configs/blueprints/hunl_small.yaml --searches 8",
        "sog bench gpu --out gpu_bench.json",
    ],
    "baselines": ["sog baselines --game kuhn_poker --budget 5"],
    "bench-mccfr": ["sog bench-mccfr --game leduc_poker --seconds 30 --variants outcome,external"],
    "eval": ["sog eval --run runs/leduc --search 10,1 100,1 --seeds 8"],
    "diagnose": ["sog diagnose --run runs/leduc --samples 600 --swap"],
    "tournament": ["sog tournament --config configs/tournaments/kuhn_gauntlet.yaml --out tournaments/kuhn"],
    "lbr": ["sog lbr --game leduc_poker --agent 'cfr?iterations=100' --hands 2000"],
    "uci": ["printf 'uci\\nposition startpos moves e2e4\\ngo movetime 500\\nquit\\n' | sog uci --agent random"],
    "gtp": ["printf 'boardsize 9\\ngenmove b\\nquit\\n' | sog gtp --agent random"],
    "acpc": ["sog acpc --host 127.0.0.1 --port 18791 --agent 'equity?fold=0.3&raise=0.7' --game hunl"],
    "buckets": ["sog buckets --game hunl --buckets 0,200,200,200 --cache-dir ~/.cache/sog/buckets"],
    "blueprint": ["sog blueprint --config configs/blueprints/small.yaml --out blueprints/small --seconds 600"],
    "train": ["sog train --config leduc --set run.minutes=10"],
    "doctor": ["sog doctor --config leduc --set inference.device=gpu:0"],
}

_MD_SPECIAL = re.compile(r"([*<>|])")


def _text(s: str) -> str:
    """argparse help as Markdown text: one line, Markdown's special characters escaped
    outside code spans."""
    s = " ".join(s.split())
    parts = s.split("`")
    for i in range(0, len(parts), 2):            # even parts are outside `code`
        parts[i] = _MD_SPECIAL.sub(r"\\\1", parts[i])
    return "`".join(parts) if len(parts) % 2 == 1 else _MD_SPECIAL.sub(r"\\\1", s)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    try:
        return parser._get_formatter()._expand_help(action)
    except (KeyError, TypeError, ValueError):
        return action.help


def _signature(action: argparse.Action) -> str:
    if not action.option_strings:
        if action.choices is not None and not action.metavar:
            return "{" + ",".join(str(c) for c in action.choices) + "}"
        return action.metavar or action.dest
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    if action.choices is not None:
        value = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        value = action.metavar or action.dest.upper()
    if action.nargs in ("+", "*"):
        value += " ..."
    return f"{flag} {value}"


def _default(action: argparse.Action) -> str | None:
    d = action.default
    if action.nargs == 0 or d is None or d is argparse.SUPPRESS or d == [] or action.required:
        return None
    return repr(d) if isinstance(d, str) and not d else str(d)


def subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name) or "", sub


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole page as Markdown."""
    if parser is None:
        from launch.cli import build_parser
        parser = build_parser()
    commands = list(subcommands(parser))
    out = [
        "# Command-line reference",
        "",
        "<!-- Generated by `python -m launch.cli_reference > docs/cli.md`; do not edit by hand. -->",
        "",
        "Every command prints one JSON object on stdout (`sog uci` and `sog gtp` excepted: their "
        "stdout is the protocol's); progress and human-readable lines go to stderr. A user error "
        "(unknown game, malformed file, a run directory that cannot be written or resumed, a game "
        "too large for the exact tools) is one line on stderr and exit status 2, having written "
        "nothing; Ctrl-C and SIGTERM stop a command cleanly with exit status 130.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name, help_, _ in commands:
        out.append(f"| [`sog {name}`](#sog-{name}) | {_text(help_)} |")
    for name, help_, sub in commands:
        out += ["", f"## sog {name}", ""]
        if help_:
            out += [_text(help_[0].upper() + help_[1:]) + ".", ""]
        usage = " ".join(sub.format_usage().split())
        usage = usage.removeprefix("usage: ")
        out += ["```text", usage, "```", ""]
        rows = [a for a in sub._actions if not isinstance(a, argparse._HelpAction)]
        if rows:
            for a in rows:
                line = f"- `{_signature(a)}`"
                extra = []
                if a.required:
                    extra.append("required")
                d = _default(a)
                h = _help(sub, a)
                if d is not None and "(default" not in h:        # a help line may name it itself
                    extra.append(f"default `{d}`")
                if extra:
                    line += f" ({', '.join(extra)})"
                if h:
                    line += ": " + _text(h)
                out.append(line)
            out.append("")
        examples = EXAMPLES.get(name) or []
        if examples:
            out += ["Example" + ("s" if len(examples) > 1 else "") + ":", "", "```bash"]
            out += examples
            out += ["```"]
    return "\n".join(out) + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
