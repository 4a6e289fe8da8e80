"""JobConfig: the job's chat model reaches every strategy that names none, however nested."""
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.config import JobConfig, llm_configs
from beam_chunking.llm import LLMConfig
from beam_chunking.refiners import Refined, Sanitiser
from beam_chunking.strategies import ParentChildChunker, PropositionChunker, RecursiveChunker, Router


def test_the_job_llm_fills_strategies_that_name_none_and_keeps_their_own():
    own = LLMConfig(model="dedicated")
    strategy = Router({"text/markdown": PropositionChunker(llm=own),
                       "text/plain": Refined(ParentChildChunker(child=PropositionChunker()), Sanitiser())},
                      default=PropositionChunker())
    job = JobConfig.of(strategy=strategy, llm={"model": "job-model"})
    assert job.llm == LLMConfig(model="job-model")
    routes = job.strategy.routes
    assert routes["text/markdown"].llm == own
    assert routes["text/plain"].base.child.llm.model == "job-model"
    assert job.strategy.default.llm.model == "job-model"
    assert JobConfig.of(strategy=RecursiveChunker(), llm={"model": "m"}).strategy == RecursiveChunker()
    assert JobConfig.of(strategy=PropositionChunker()).strategy.llm is None  # no job llm: defaults later


def test_every_chat_model_inside_a_strategy_is_found():
    own = LLMConfig(model="dedicated", cache="gs://bucket/answers")
    strategy = Router({"text/markdown": PropositionChunker(llm=own),
                       "text/plain": Refined(ParentChildChunker(child=PropositionChunker()), Sanitiser())},
                      default=RecursiveChunker())
    job = JobConfig.of(strategy=strategy, llm={"model": "job-model"})
    assert sorted(llm.model for llm in llm_configs(job.strategy)) == ["dedicated", "job-model"]
    assert [llm.cache for llm in llm_configs(job.strategy) if llm.model == "dedicated"] == ["gs://bucket/answers"]
    assert llm_configs(RecursiveChunker()) == []


@pytest.mark.parametrize("name", ["max_failures", "max_deletions"])
def test_run_limits_are_checked_when_the_job_is_built(name):
    assert getattr(JobConfig(**{name: 3}), name) == "3" and getattr(JobConfig(**{name: "5%"}), name) == "5%"
    with pytest.raises(ConfigError, match=f"{name}: expected a count such as 3 or a percentage"):
        JobConfig(**{name: "lots"})
