"""The SoG(s, c) agent with a freshly initialised CVPN plays legal, complete, seeded
games of every game; bad search settings and checkpoints fail clearly."""
import pytest

from networks.cvpn import init_params
from networks.value_function import NetworkValueFunction
from sog.agents.sog_agent import SoGAgent
from sog.config import NetworkConfig
from sog.eval.match import play_game
from sog.games import load_game
from sog.search.settings import SearchSettings

GAMES = ["kuhn_poker", "leduc_poker", "liars_dice", "scotland_yard", "tic_tac_toe"]


@pytest.mark.parametrize("name", GAMES)
def test_fresh_cvpn_agent_plays_complete_seeded_games(name):
    game = load_game(name)
    config = NetworkConfig(hidden=32, layers=1)
    vf = NetworkValueFunction(game, config, init_params(game, config, seed=0))
    agents = [SoGAgent(game, vf, SearchSettings(4, 1)) for _ in (0, 1)]
    first = play_game(game, agents, seed=5)
    again = play_game(game, agents, seed=5)
    assert first["history"] == again["history"] and first["returns"] == again["returns"]
    assert game.kind(first["pubs"][-1]) == 2          # ended at a terminal
    assert abs(first["returns"][0]) <= game.spec.max_utility


def test_checkpoint_of_another_game_is_refused(tmp_path):
    from learners.checkpoint import CheckpointError, CheckpointStore, load_value_function
    from learners.train_state import init_train_state
    from sog.config import LearnerConfig

    kuhn, leduc = load_game("kuhn_poker"), load_game("leduc_poker")
    net, learner = NetworkConfig(hidden=8, layers=1), LearnerConfig()
    with CheckpointStore(tmp_path, kuhn, net, learner) as store:
        store.save(init_train_state(kuhn, net, learner, seed=0), version=0)
    assert load_value_function(tmp_path, kuhn).game is kuhn
    with pytest.raises(CheckpointError, match="kuhn_poker"):
        load_value_function(tmp_path, leduc)


@pytest.mark.slow
def test_fresh_cvpn_agent_plays_london_in_both_seats():
    """Continual re-solving along whole London games (about 12 s a game on 2 cores)."""
    from sog.agents.registry import make_agent
    game = load_game("scotland_yard_london")
    config = NetworkConfig(hidden=32, layers=1)
    vf = NetworkValueFunction(game, config, init_params(game, config, seed=0))
    heuristic = make_agent("sy_heuristic", game)
    for seat in (0, 1):
        agents = [heuristic, heuristic]
        agents[seat] = SoGAgent(game, vf, SearchSettings(4, 1))
        out = play_game(game, agents, seed=5)
        assert game.kind(out["pubs"][-1]) == 2 and abs(out["returns"][0]) == 1
