"""team_configs: how agents sample, so rows of a bench share draws and a cascade escalates to ``single``."""

from memdoor.agents.team import team_configs


def test_a_single_model_team_varies_temperature_seed_and_variant_by_agent():
    configs = team_configs(["m"], 3, seed=7, temperatures=(0.2, 0.6))
    assert [(c.temperature, c.seed, c.prompt_variant) for c in configs] == [
        (0.2, 7, 0),
        (0.6, 1007, 1),
        (0.2, 2007, 2),
    ]
    assert [c.id for c in configs] == ["agent0", "agent1", "agent2"]


def test_each_models_first_agent_samples_like_single_of_that_model():
    big_first = team_configs(["big", "small", "small"], 3)
    small_first = team_configs(["small", "big"], 2)
    single = team_configs(["big"], 1)[0]
    for team in (big_first, small_first):
        first_big = next(c for c in team if c.model == "big")
        assert (first_big.temperature, first_big.seed, first_big.prompt_variant) == (
            single.temperature,
            single.seed,
            single.prompt_variant,
        )
    # the small agents of the mixed team are the first two of a team of small agents
    small_team = team_configs(["small"], 2)
    mixed_small = [(c.temperature, c.seed, c.prompt_variant) for c in big_first if c.model == "small"]
    assert mixed_small == [(c.temperature, c.seed, c.prompt_variant) for c in small_team]


def test_languages_stay_round_robin_by_agent():
    configs = team_configs(["a", "b"], 4, languages=["python", "rust"])
    assert [c.language for c in configs] == ["python", "rust", "python", "rust"]
    assert [c.prompt_variant for c in configs] == [0, 0, 1, 1]
