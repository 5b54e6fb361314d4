"""`sog acpc --host H --port P --agent SPEC [--game GAME]`: a sog agent at an ACPC dealer.

Connects to the dealer (project_acpc_server's `dealer`, or any server of the ACPC
match-state protocol 2.0.0), says `VERSION:2.0.0`, and plays every hand the dealer deals
until it closes the connection: `sog.agents.external.acpc.ACPCSession` answers each
`MATCHSTATE` where the agent is to act, mapping the real (no-limit: any size) raises to
and from the game's abstraction (see that module). `--game` is the hold'em game the agent
plays, with the dealer's cards, blinds and stacks (default `hunl`, the ACPC HUNL game:
52 cards, blinds 50 / 100, stacks 20,000 chips). Prints one JSON object at the end:
hands played, net chips of this seat, mbb/hand, decisions and fallback decisions; a line
of progress on stderr as it goes. A dealer that cannot be reached, or that sends a
malformed, illegal or non-ASCII state, that resets the connection or that sends nothing
for `--read-timeout` seconds, is a one-line error (exit status 2).
"""
from __future__ import annotations

import math
import socket
import time

from launch.console import UserError, say
from launch.games import named_holdem
from sog.agents.api import AgentError, AgentFailure
from sog.agents.external.acpc import ACPCError, ACPCSession
from sog.agents.registry import make_agent
from sog.games.world import IllegalActionError

VERSION = "VERSION:2.0.0"
READ_TIMEOUT = 660.0     # seconds a dealer may be silent before the match is given up


def add_parser(subparsers):
    a = subparsers.add_parser("acpc", help="play an agent at an ACPC poker dealer")
    a.add_argument("--host", required=True, help="the dealer's host")
    a.add_argument("--port", type=int, required=True, help="the port the dealer gave this seat")
    a.add_argument("--agent", required=True, help="agent spec, e.g. equity?fold=0.3&raise=0.7, sog:RUN?s=10&c=1")
    a.add_argument("--game", default="hunl", help="the hold'em game the agent plays (default hunl)")
    a.add_argument("--seed", type=int, default=0, help="seed of the agent's hands (each hand's derives from it)")
    a.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the connection")
    a.add_argument("--read-timeout", type=float, default=READ_TIMEOUT,
                   help="seconds to wait for each message from the dealer (default 660: longer than the "
                        "reference dealer's 10-minute limit on a response of the other seat)")
    a.set_defaults(func=run)
    return a


def play(sock: socket.socket, session: ACPCSession, args) -> None:
    """Say the version and answer the dealer's states on `sock` until it closes the connection
    (UserError for a bad state or a failing agent; OSError / TimeoutError from the socket)."""
    sock.settimeout(args.read_timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # one short line at a time
    sock.sendall((VERSION + "\r\n").encode("ascii"))
    for data in sock.makefile("rb"):
        try:
            line = data.decode("ascii")
        except UnicodeDecodeError:
            raise UserError(f"bad state from the dealer: not ASCII: {data.strip()!r}") from None
        try:
            reply = session.handle(line)
        except ACPCError as e:
            where = "" if line.strip() in str(e) else f" in {line.strip()!r}"
            raise UserError(f"bad state from the dealer: {e}{where}") from None
        except (AgentFailure, AgentError, IllegalActionError) as e:
            raise UserError(f"agent {args.agent!r} failed: {e}") from None
        if reply is not None:
            sock.sendall((reply + "\r\n").encode("ascii"))
        elif session.hands and session.counted and session.hands % 100 == 0:
            say(f"\racpc: {session.hands} hands, {session.chips:+.0f} chips", end="")


def run(args) -> dict:
    if not 1 <= args.port <= 65535:
        raise UserError(f"--port must be a TCP port, 1 to 65535, got {args.port}")
    for flag, value in (("--timeout", args.timeout), ("--read-timeout", args.read_timeout)):
        if not (math.isfinite(value) and value > 0):
            raise UserError(f"{flag} must be a positive number of seconds, got {value}")
    game = named_holdem(args.game)
    try:
        session = ACPCSession(game, make_agent(args.agent, game), args.seed)
    except (AgentError, ACPCError) as e:
        raise UserError(str(e)) from None
    try:
        sock = socket.create_connection((args.host, args.port), timeout=args.timeout)
    except OSError as e:
        raise UserError(f"cannot connect to the ACPC dealer at {args.host}:{args.port}: "
                        f"{e.strerror or e}") from None
    t0 = time.perf_counter()
    where = f"the ACPC dealer at {args.host}:{args.port}"
    with sock:
        try:
            play(sock, session, args)
        except TimeoutError:
            raise UserError(f"{where} sent nothing for {args.read_timeout:g} s") from None
        except OSError as e:
            raise UserError(f"{where} broke the connection: {e.strerror or e}") from None
    session.agent.close()
    out = session.summary()
    say(f"\racpc: {out['hands']} hands, {out['chips']:+.0f} chips, {out['mbb_per_hand']:+.1f} mbb/hand, "
        f"{out['fallbacks']} fallback decisions of {out['decisions']}")
    return {"host": args.host, "port": args.port, "agent": args.agent, "game": game.spec.name,
            **out, "seconds": time.perf_counter() - t0}
