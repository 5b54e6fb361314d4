"""Training configs: YAML loading, overrides, type and value checks, round trips, shipped files."""
import dataclasses
import sys

import pytest
import yaml

from sog.config import (
    Config,
    ConfigError,
    LearnerConfig,
    apply_overrides,
    config_diff,
    config_from_dict,
    config_path,
    config_to_dict,
    dump_config,
    load_config,
    parse_eval_search,
    parse_override,
    shipped_configs,
)


def write(tmp_path, data, name="cfg.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_defaults_and_sections(tmp_path):
    cfg = load_config(write(tmp_path, {"game": "kuhn_poker"}))
    assert cfg == Config(game="kuhn_poker")
    cfg = load_config(write(tmp_path, {"game": "leduc_poker", "network": None,
                                       "learner": {"batch_size": 64, "learning_rate": 1}}))
    assert cfg.learner.batch_size == 64
    assert cfg.learner.learning_rate == 1.0 and isinstance(cfg.learner.learning_rate, float)
    assert cfg.learner.optimizer == LearnerConfig().optimizer


def test_yaml_exponent_without_dot_is_a_float(tmp_path):
    # YAML 1.1 reads 1e-3 as a string; float fields accept it
    cfg = load_config(write(tmp_path, "game: kuhn_poker\nlearner:\n  learning_rate: 1e-3\n"))
    assert cfg.learner.learning_rate == 1e-3


def test_overrides(tmp_path):
    path = write(tmp_path, {"game": "leduc_poker", "search": {"simulations": 50}})
    cfg = load_config(path, ["learner.learning_rate=3e-4", "search.simulations=10", "game=kuhn_poker",
                             "run.eval_search=10,1;100,1", "selfplay.epsilon=0", "network.activation=gelu"])
    assert cfg.learner.learning_rate == 3e-4
    assert cfg.search.simulations == 10
    assert cfg.game == "kuhn_poker"
    assert cfg.selfplay.epsilon == 0.0 and isinstance(cfg.selfplay.epsilon, float)
    assert cfg.network.activation == "gelu"
    evaluated = parse_eval_search(cfg.run.eval_search, cfg.search)
    assert [s.label for s in evaluated] == ["10,1", "100,1"]
    assert evaluated[0] == dataclasses.replace(cfg.search, simulations=10, per_phase=1.0)
    # the last override of a key wins; the game string may hold '=' and ','
    cfg = load_config(path, ["search.simulations=7", "search.simulations=8",
                             "game=liars_dice(numdice=1,dice_sides=6)"])
    assert cfg.search.simulations == 8 and cfg.game.startswith("liars_dice")
    assert parse_override("replay.capacity=1_000") == ("replay.capacity", 1000)
    assert apply_overrides(cfg, ["learner.batch_size=8"]).learner.batch_size == 8


def test_round_trip_dict_and_file(tmp_path):
    cfg = load_config("leduc", ["learner.learning_rate=3.3e-5", "search.per_phase=0.01",
                                "run.eval_search=10,1;100,1"])
    d = config_to_dict(cfg)
    assert config_from_dict(d) == cfg
    assert config_from_dict(yaml.safe_load(yaml.safe_dump(d))) == cfg
    dump_config(cfg, tmp_path / "out.yaml")
    assert load_config(tmp_path / "out.yaml") == cfg
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]
    other = dataclasses.replace(cfg, learner=dataclasses.replace(cfg.learner, batch_size=7))
    assert config_diff(cfg, other) == [f"learner.batch_size: {cfg.learner.batch_size} -> 7"]
    assert config_diff(cfg, cfg) == []


@pytest.mark.parametrize("data,overrides,words", [
    ({"game": "kuhn_poker", "learner": {"batch_sise": 8}}, [], ["learner.batch_sise", "unknown key"]),
    ({"game": "kuhn_poker", "learnr": {}}, [], ["learnr", "unknown section"]),
    ({"game": "kuhn_poker"}, ["search.simulatons=3"], ["search.simulatons", "override"]),
    ({"game": "kuhn_poker"}, ["serch.simulations=3"], ["serch", "override"]),
    ({"game": "kuhn_poker", "learner": {"batch_size": 8.5}}, [], ["learner.batch_size", "int"]),
    ({"game": "kuhn_poker", "learner": {"batch_size": True}}, [], ["learner.batch_size", "int"]),
    ({"game": "kuhn_poker", "learner": {"learning_rate": "fast"}}, [], ["learner.learning_rate", "float"]),
    ({"game": "kuhn_poker", "learner": {"learning_rate": True}}, [], ["learner.learning_rate", "float"]),
    ({"game": "kuhn_poker", "network": {"activation": 3}}, [], ["network.activation", "str"]),
    ({"game": "kuhn_poker"}, ["learner.batch_size=big"], ["learner.batch_size", "int", "override"]),
    ({"game": "kuhn_poker", "network": [1, 2]}, [], ["network", "mapping"]),
    ({"game": 7}, [], ["game", "str"]),
    ({"network": {}}, [], ["game", "missing"]),
    ({"game": "chess960"}, [], ["game", "chess960"]),
    ({"game": "kuhn_poker"}, ["game=nope"], ["game", "nope", "override"]),
    ({"game": "kuhn_poker", "learner": {"batch_size": 0}}, [], ["learner.batch_size", ">= 1"]),
    ({"game": "kuhn_poker", "learner": {"optimizer": "rmsprop"}}, [], ["learner.optimizer", "adam"]),
    ({"game": "kuhn_poker", "network": {"activation": "tanh"}}, [], ["network.activation", "relu"]),
    ({"game": "kuhn_poker", "network": {"kind": "convnext"}}, [], ["network.kind", "one of mlp, resnet",
                                                                   "'convnext'"]),
    ({"game": "kuhn_poker", "network": {"kind": "resnet"}}, [], ["network.kind", "board features"]),
    ({"game": "kuhn_poker", "search": {"per_phase": 0}}, [], ["search.per_phase", "> 0"]),
    ({"game": "kuhn_poker", "search": {"simulations": 3, "per_phase": 5}}, [], ["search.per_phase"]),
    ({"game": "kuhn_poker"}, ["search.top_k=-1"], ["search.top_k", ">= 0", "override"]),
    ({"game": "kuhn_poker", "search": {"gadget_alpha": 1.5}}, [], ["search.gadget_alpha", "[0, 1]"]),
    ({"game": "kuhn_poker", "search": {"puct_c": -1}}, [], ["search.puct_c", ">= 0"]),
    ({"game": "kuhn_poker", "search": {"alternating": 1}}, [], ["search.alternating", "bool"]),
    ({"game": "kuhn_poker", "selfplay": {"epsilon": 1.5}}, [], ["selfplay.epsilon", "[0, 1]"]),
    ({"game": "kuhn_poker", "selfplay": {"p_td1": -0.1}}, [], ["selfplay.p_td1", "[0, 1]"]),
    ({"game": "kuhn_poker", "solver": {"q_recursive": 1.0}}, [], ["solver.q_recursive"]),
    ({"game": "kuhn_poker", "solver": {"q_random": -0.5}}, [], ["solver.q_random", ">= 0", "-0.5"]),
    ({"game": "kuhn_poker"}, ["solver.q_random=lots"], ["solver.q_random", "float", "override"]),
    ({"game": "kuhn_poker", "selfplay": {"p_td1": 1.0}, "solver": {"solvers": 0, "q_random": 1}}, [],
     ["solver.q_random", "no solvers"]),
    ({"game": "kuhn_poker", "solver": {"search": "many"}}, [], ["solver.search", "'many'"]),
    ({"game": "kuhn_poker"}, ["solver.search=3,5"], ["solver.search", "3,5", "override"]),
    ({"game": "kuhn_poker", "replay": {"capacity": 10, "min_size": 20}}, [], ["replay.min_size"]),
    ({"game": "kuhn_poker", "replay": {"capacity": 100}}, [], ["replay.min_size"]),
    ({"game": "kuhn_poker", "replay": {"max_updates_per_example": 0}}, [],
     ["replay.max_updates_per_example"]),
    ({"game": "kuhn_poker", "run": {"eval_search": "ten"}}, [], ["run.eval_search", "ten"]),
    ({"game": "kuhn_poker", "inference": {"servers": -1}}, [], ["inference.servers", ">= 0", "got -1"]),
    ({"game": "kuhn_poker", "learner": {"checkpoint_every": 1000, "keep_period": 2500}}, [],
     ["learner.keep_period", "multiple of learner.checkpoint_every = 1000", "got 2500"]),
    ({"game": "kuhn_poker", "learner": {"ema_decay": 1.0}}, [], ["learner.ema_decay", "[0, 1)", "got 1.0"]),
    ({"game": "kuhn_poker"}, ["inference.servers=1.5"], ["inference.servers", "int", "override"]),
    ({"game": "kuhn_poker", "run": {"eval_grace": -1}}, [], ["run.eval_grace", "[0, 600]"]),
    ({"game": "kuhn_poker"}, ["run.eval_grace=3600"], ["run.eval_grace", "[0, 600]", "override"]),
    ({"game": "kuhn_poker", "learner": {"learning_rate": ".inf"}}, [], ["learner.learning_rate"]),
])
def test_errors_name_the_key(tmp_path, data, overrides, words):
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert str(path) in message or "override" in message


def test_errors_name_the_file_and_type(tmp_path):
    path = write(tmp_path, {"game": "kuhn_poker", "replay": {"capacity": "many"}})
    with pytest.raises(ConfigError, match=r"replay\.capacity in .*cfg\.yaml: expected int, got 'many'"):
        load_config(path)


@pytest.mark.parametrize("text,key", [
    ("learner.learning_rate", "not key=value"),
    ("a.b.c=1", "'a.b.c'"),
    ("learner.learning_rate=[", "learner.learning_rate"),
])
def test_bad_override_syntax(text, key):
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace(".", r"\.")):
        parse_override(text)


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="neither a file nor a shipped config"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "game: [unclosed\n"))
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(ConfigError, match="expected a mapping"):
        config_from_dict([1, 2])


def test_shipped_configs_load():
    names = shipped_configs()
    assert {"kuhn", "leduc", "liars_dice", "scotland_yard", "tiny_kuhn"} <= set(names)
    for name in names:
        cfg = load_config(name)
        board = cfg.game.startswith(("chess", "go"))
        assert cfg.network.kind == ("resnet" if board else "mlp")   # no kind in the file: the default
        assert config_from_dict(config_to_dict(cfg)) == cfg
        assert load_config(config_path(f"{name}.yaml")) == cfg
        assert load_config(f"configs/{name}.yaml") == cfg      # from any working directory
    leduc = load_config("leduc")
    assert leduc.game == "leduc_poker" and leduc.run.minutes <= 60
    assert leduc.selfplay.workers == 1 and leduc.solver.solvers == 1
    assert 10 <= leduc.search.simulations <= 20
    assert parse_eval_search(leduc.run.eval_search)[0].label == "10,1" and leduc.run.eval_every > 0
    hunl = load_config("hunl")                                 # Table S2's HUNL column, Table S1's net
    assert (hunl.network.layers, hunl.network.hidden, hunl.search.label) == (6, 2048, "10,0.01")
    assert (hunl.learner.batch_size, hunl.learner.optimizer, hunl.learner.learning_rate) == (1024, "adam", 1e-4)
    assert (hunl.learner.lr_decay_steps, hunl.learner.lr_decay_rate) == (2_000_000, 0.5)
    assert (hunl.learner.policy_weight, hunl.learner.value_weight) == (0.01, 1.0)
    assert (hunl.replay.capacity, hunl.replay.max_updates_per_example) == (1_000_000, 10.0)
    assert (hunl.selfplay.q_search, hunl.solver.q_recursive, hunl.selfplay.epsilon) == (0.9, 0.1, 0.1)
    assert hunl.search.prior_temperature == 1.0 and hunl.search.chance_limit > 0
    sy = load_config("scotland_yard")
    assert (sy.learner.batch_size, sy.learner.optimizer, sy.learner.learning_rate) == (1024, "sgd", 0.1)
    assert (sy.selfplay.q_search, sy.solver.q_recursive, sy.replay.max_updates_per_example) == (0.3, 0.1, 5.0)
    assert sy.search.simulations == 100
    london = load_config("scotland_yard_london")                  # Tables S1 / S2, SoG(400, 1)
    assert london.game == "scotland_yard_london(drawn=1)" and (london.network.hidden, london.network.layers) == (512, 6)
    assert (london.learner.batch_size, london.learner.learning_rate, london.learner.policy_weight) == (1024, 0.1, 0.05)
    assert (london.search.simulations, london.search.per_phase, london.replay.capacity) == (400, 1.0, 1_000_000)
    assert london.run.eval_every == 0                              # the London tree is not enumerable
    small = load_config("scotland_yard_london_small")
    assert small.network == london.network and small.selfplay.workers == 1 and small.solver.solvers == 1
    board_configs = ("chess", "chess_small", "go9", "go9_small", "go19")
    assert set(board_configs) <= set(names)
    for name in board_configs:                                    # Table S2, perfect information
        cfg = load_config(name)
        sp, search = cfg.selfplay, cfg.search
        assert (search.top_k, search.prior_temperature, sp.epsilon) == (1, 1.5, 0.0)
        assert (sp.resign, sp.resign_threshold, sp.p_no_resign, sp.greedy_after) == (True, -0.9, 0.2, 30)
        assert cfg.learner.optimizer == "sgd" and cfg.learner.policy_weight == 1.0
        go = cfg.game.startswith("go")
        assert sp.p_td1 == (0.2 if go else 0.0) and cfg.learner.value_weight == (0.5 if go else 0.25)
        assert (sp.q_search, cfg.solver.q_recursive) == ((0.0, 0.0) if go else (1.0, 0.2))
        assert sp.max_moves == {"chess": 512, "go": 162, "go(board_size=19)": 722,
                                "go(score_weight=0.5)": 162}[cfg.game]
    for name in ("chess", "go9", "go19"):                          # the paper's scale
        cfg = load_config(name)
        assert (cfg.network.blocks, cfg.network.channels, cfg.search.simulations) == (19, 256, 400)
        assert (cfg.learner.batch_size, cfg.replay.capacity) == (2048, 50_000_000)
        assert cfg.replay.max_updates_per_example == (1.0 if name == "chess" else 0.2)
    for name in ("chess_small", "go9_small"):
        cfg = load_config(name)
        assert cfg.selfplay.workers == 1 and cfg.solver.solvers <= 1 and cfg.replay.capacity <= 20000
    tiny = load_config("tiny_kuhn")
    assert tiny.learner.batch_size == 32 and tiny.search.simulations <= 5 and tiny.run.minutes <= 1


def test_unknown_network_kind_is_one_line_and_exit_status_2(capsys):
    from launch.cli import main as cli_main
    rc = cli_main(["train", "--config", "tiny_kuhn", "--sync", "--set", "network.kind=convnext"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "network.kind" in err and "one of mlp" in err


def test_bad_inference_servers_is_one_line_and_exit_status_2(capsys):
    from launch.cli import main as cli_main
    rc = cli_main(["train", "--config", "tiny_kuhn", "--sync", "--set", "inference.servers=-1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "inference.servers" in err and "an int >= 0" in err
    assert load_config("tiny_kuhn", ["inference.servers=3"]).inference.servers == 3
    assert load_config("tiny_kuhn").inference.servers == 1


def test_config_module_imports_no_ray_or_jax():
    import subprocess
    code = ("import sys, sog.config; sog.config.load_config('leduc'); "
            "bad = [m for m in ('ray', 'jax', 'networks', 'learners', 'actors') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_solver_search_defaults_to_the_search_section_and_overrides_s_and_c_only(tmp_path):
    from sog.config import solver_search
    path = write(tmp_path, {"game": "kuhn_poker", "search": {"simulations": 10, "puct_c": 2.0}})
    cfg = load_config(path)
    assert cfg.solver.search == "" and solver_search(cfg) == cfg.search
    own = load_config(path, ["solver.search=100,0.5"])
    got = solver_search(own)
    assert (got.simulations, got.per_phase, got.puct_c) == (100, 0.5, 2.0)
    assert own.search == cfg.search            # self-play's search is untouched
    assert config_from_dict(config_to_dict(own)) == own
