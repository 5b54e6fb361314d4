"""`sog tournament --config FILE` and `sog lbr --game GAME --agent SPEC --hands N`.

tournament: a YAML file with `players:` is a hold'em table of 2 to 6 players, one
candidate against copies of a reference (`launch.table`, `sog.eval.table.tournament`); otherwise it
plays the tournament the file describes (`sog.eval.tournament`:
round robin or gauntlet, seats swapped, duplicate deals for card games, games
in parallel worker processes, every finished game appended to
OUT/games.jsonl so an interrupted run resumes where it stopped) and writes
the report: the head-to-head matrix with 95% intervals, Elo ratings fitted by
maximum likelihood (anchored), for poker mbb/hand with and without AIVAT,
as report.txt (also printed to stderr), report.json, head_to_head.csv,
elo.csv and tournament.png in OUT (default: the config's `out`, else
tournaments/<config file name>).

lbr: the local best response's win rate against an agent, in mbb/hand with
its 95% interval (`sog.eval.lbr`); hold'em without dense payoffs (more than 120
hands: `--game hunl`) plays the fold / call LBR vectorised over the hands
(`sog.eval.holdem.lbr`); `--config BLUEPRINT.yaml` (instead of `--game`) plays it at that
two-player config's table against a table agent, a blueprint above all (`launch.table.run_lbr`,
`sog.eval.table.lbr`).

`add_parser(subparsers)` adds both commands (`run` and `run_lbr` as their
funcs); both return a JSON-able dict; user errors raise `launch.console.UserError`.
"""
from __future__ import annotations

import functools
import math
import time
from pathlib import Path

from launch.console import UserError, say
from sog.agents.api import AgentError
from sog.agents.registry import make_agent
from sog.eval.aivat import equilibrium_values, network_world_values
from sog.eval.elo import EloError
from sog.eval.holdem.lbr import HoldemLBR
from sog.eval.lbr import LBRError, lbr_match
from sog.eval.tournament import (
    CHECKDOWN,
    ResultStore,
    TournamentError,
    format_report,
    load_config,
    run_tournament,
)
from sog.games import UnknownGameError, load_game
from sog.games.holdem import Holdem


def add_parser(subparsers):
    t = subparsers.add_parser("tournament", help="round robin / gauntlet between agents: Elo, AIVAT")
    t.add_argument("--config", required=True, help="tournament YAML (see configs/tournaments/)")
    t.add_argument("--out", help="output directory (default: the config's `out`, else tournaments/<name>)")
    t.add_argument("--workers", type=int, help="override the config's worker processes")
    t.add_argument("--games", type=int, help="override games_per_pair")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=run)

    lb = subparsers.add_parser("lbr", help="local best response win rate against an agent (poker)")
    where = lb.add_mutually_exclusive_group(required=True)
    where.add_argument("--game", help="a poker game: kuhn_poker, leduc_poker, a small holdem(...), "
                                      "or hold'em at full scale (hunl: the fold/call LBR over all hands)")
    where.add_argument("--config", help="a two-player blueprint config (configs/blueprints/hunl_small.yaml): the "
                                        "fold/call LBR at its table against a table agent (blueprint:CONFIG"
                                        "[?file=PATH|policy=average], endgame:, search:, modicum:, call, random; "
                                        "sog.eval.table.lbr)")
    lb.add_argument("--agent", required=True, help="agent spec, e.g. tabular:policy.json or sog:RUN?s=10&c=1; "
                                                   "with --config a table agent")
    lb.add_argument("--hands", type=int, default=1000, help="hands (rounded up to whole duplicate deals)")
    lb.add_argument("--bets", default="",
                    help="bets LBR may make besides fold/call: comma-separated names (kuhn: bet, leduc: "
                         "raise) or 'all'; default none (the paper's fold/call LBR)")
    lb.add_argument("--versus", help="with --config: a second table agent; LBR plays both on the same deals and "
                                     "reports the difference of its win rates, against --agent minus against "
                                     "--versus, per deal with its 95%% interval (sog.eval.table.lbr)")
    lb.add_argument("--seed", type=int, default=0, help="the deals' and the agents' seed (default 0)")
    lb.set_defaults(func=run_lbr)
    return t


def setup_agents() -> None:
    """Register the agent kinds of launch: `sog:` (whose networks live above sog/) and
    `blueprint:` (a `sog blueprint` configuration's file)."""
    from launch.blueprint_agent import register_blueprint_agent
    from launch.values import register_sog_agent
    register_sog_agent()
    register_blueprint_agent()


class ProgressBar:
    """`[#####.....] done/total games  rate/s  ETA` on stderr, redrawn in place."""

    def __init__(self, label: str, quiet: bool = False, width: int = 30):
        self.label, self.quiet, self.width = label, quiet, width
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int, total: int, played: int) -> None:
        if self.quiet:
            return
        now = time.perf_counter()
        if done < total and now - self.last < 0.2 and played > 0:
            return
        self.last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * self.width)
        rate = played / max(now - self.t0, 1e-9)
        eta = (total - done) / rate if rate > 0 else float("nan")
        eta_text = "-" if math.isnan(eta) else f"{int(eta) // 60}:{int(eta) % 60:02d}"
        say(f"\r{self.label} [{bar:<{self.width}}] {done}/{total} games {rate:.1f}/s ETA {eta_text}  ", end="")
        if done >= total:
            say()


def aivat_values(cfg, game):
    """The AIVAT values of a config, fixed before any game is played: a table {pub: float [N, N]},
    or, for hold'em too big for tables, a picklable builder of the CVPN that the workers value
    each hand with along its path; None for the check-down values (built by the workers)."""

    if not cfg.aivat or cfg.aivat_value == CHECKDOWN:
        return None
    if cfg.aivat_value == "equilibrium":
        return equilibrium_values(game, cfg.aivat_iterations).table
    from launch.values import make_value_function
    try:
        vf = make_value_function(cfg.aivat_value, game)
    except (ValueError, FileNotFoundError) as e:
        raise UserError(f"aivat_value: {e}") from None
    if isinstance(game, Holdem) and not game.dense_payoffs:
        return functools.partial(make_value_function, cfg.aivat_value)
    return network_world_values(game, vf, name=cfg.aivat_value).table


def run(args) -> dict:

    from launch import table
    if table.is_table_config(args.config):      # `players:`: a hold'em table of 2 to 6 (launch.table)
        return table.run(args)
    setup_agents()
    overrides = {"workers": args.workers, "games_per_pair": args.games}
    try:
        cfg = load_config(args.config, overrides)
    except TournamentError as e:
        raise UserError(str(e)) from None
    out = args.out or cfg.out or str(Path("tournaments") / Path(args.config).name.removesuffix(".yaml"))
    try:
        ResultStore(out, cfg).check()            # another tournament's results: stop before any work
    except TournamentError as e:
        raise UserError(str(e)) from None
    game = load_game(cfg.game)
    for name, spec in cfg.agents.items():        # every agent must build (checkpoints, files) before playing
        try:
            make_agent(spec, game)
        except AgentError as e:
            raise UserError(f"agent {name!r}: {e}") from None
    values = aivat_values(cfg, game)
    bar = ProgressBar(f"{cfg.game} {cfg.mode}", quiet=getattr(args, "quiet", False))
    try:
        report = run_tournament(cfg, out, values=values, setup=setup_agents, progress=bar)
    except (TournamentError, AgentError, EloError) as e:
        raise UserError(str(e)) from None
    say(format_report(report))
    say(f"results in {out}/ (games.jsonl, report.txt, report.json, head_to_head.csv, elo.csv, tournament.png)")
    return report


def run_lbr(args) -> dict:

    if args.config is not None:                 # a blueprint's table (launch.table)
        from launch import table
        return table.run_lbr(args)
    if args.versus is not None:
        raise UserError("--versus needs --config (the paired LBR plays at a blueprint's table)")
    setup_agents()
    if args.hands < 1:
        raise UserError("--hands must be at least 1")
    try:
        game = load_game(args.game)
        agent = make_agent(args.agent, game)
    except (UnknownGameError, AgentError) as e:
        raise UserError(str(e)) from None
    bets = [b for b in (args.bets or "").split(",") if b.strip()]
    lbr = None
    if isinstance(game, Holdem) and not game.dense_payoffs:
        if bets:
            raise UserError(f"--bets: LBR on {game.spec.name} is the fold/call LBR (bets only on small poker games)")
        lbr = HoldemLBR(game, seed=args.seed)

    def progress(done, total):
        say(f"\rLBR vs {args.agent}: {done}/{total} hands", end="")

    try:
        out = lbr_match(game, agent, args.hands, seed=args.seed, bets=bets, progress=progress, lbr=lbr)
    except LBRError as e:
        raise UserError(str(e)) from None
    say()
    lo, hi = out["ci95_mbb"]
    say(f"LBR ({'fold/call' if not out['bets'] else 'fold/call/' + '/'.join(out['bets'])}) against "
        f"{args.agent} on {game.spec.name}: {out['mbb_per_hand']:+.1f} mbb/hand, 95% interval "
        f"[{lo:+.1f}, {hi:+.1f}] over {out['hands']} hands ({out['seconds']:.1f} s, "
        f"{out['hands_per_second']:.2f} hands/s, {out['seconds_per_lbr_decision']:.3f} s per LBR decision)")
    return {"agent": args.agent, "seed": args.seed, **out}
