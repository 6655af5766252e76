"""The seed client protocol, served by workers: a client sets ``task:<id>``; the answer appears at
``memory:<id>``.

Every worker with the ``lead`` role scans for ``task:*`` keys (a SCAN loop, so no server
configuration is needed). For a task with no answer yet, one worker wins the claim
(``SET P claim:<id> NX PX``, renewed while it works) and orchestrates a team over the job streams:
so with N workers, one orchestrates and all N answer the model calls. If that worker dies, its
claim expires and another takes the task over, reusing every result already stored (same run id).

- The team: ``agents`` from the task, else the worker's default, else the number of live answering
  workers (at most 5); models from the task, else those of the live answering workers.
- A task without tests: the team writes test inputs from the prompt (one model call) and the
  selector votes by behaviour on them (outputs compared between candidates, not against guesses).
- The answer (JSON) is written at ``memory:<id>`` as soon as the team is done; the trace is a list
  of JSON events at ``memory:<id>:trace``, appended live while the team works.
- A malformed task gets ``{"id", "status": "error", "error"}`` at ``memory:<id>``.
- With a team key (:mod:`.signing`), the answer carries a ``signature`` (clients holding the key check
  it with ``TeamKey.open("answer", "memory:<id>", raw)``), a task counts as answered only when its
  answer is signed, a planted answer is replaced, and the team's model calls take signed results only.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from pydantic import BaseModel, Field, ValidationError
from redis.exceptions import RedisError, ResponseError

from memdoor.core.errors import MemdoorError, ModelError, ProblemFormatError, first_problem
from memdoor.core.limits import MAX_AGENTS, check_team_size
from memdoor.core.problem import Problem
from memdoor.distributed.config import WorkerConfig
from memdoor.distributed.conn import REDIS_DOWN, Backoff, live_agents, shown, text
from memdoor.distributed.jobs import Keys
from memdoor.distributed.remote import ANSWERING_ROLES, RemoteConfig, RemoteRun
from memdoor.distributed.seedtask import SeedTask, parse_task, task_problem
from memdoor.distributed.signing import ANSWER, TeamKey, served_name
from memdoor.problems.jsonl import parse_json

if TYPE_CHECKING:
    from memdoor.core.solution import Solution
    from memdoor.core.trace import TraceEvent
    from memdoor.run.env import RunEnv

log = logging.getLogger("memdoor.worker")

MAX_DEFAULT_AGENTS = 5

SEED_TEST_INPUTS = 5
"""Test inputs the team writes for a task that comes with no tests."""

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
_REPLACE = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
"""
"""Write the answer unless the key changed since it was read as ARGV[2] ('' for none or a refused
answer); also forget the run. Keys: answer, run."""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def _glob_escape(text_: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text_)


NOTED_MAX = 1000
"""Distinct warnings about peers' keys a lead remembers having logged."""


class SeedLeader:
    """The seed-protocol side of a worker: finds tasks, claims them, orchestrates, writes answers."""

    def __init__(
        self, config: WorkerConfig, redis: aioredis.Redis, instance: str, *, team_key: TeamKey | None = None
    ):
        """``config``: the worker's settings; ``redis``: its client; ``instance``: its run's unique id;
        ``team_key``: sign answers, and count only signed answers and results (None: unsigned protocol)."""
        self.config = config
        self.team_key = team_key
        self.options = config.seed
        self.redis = redis
        self.keys = Keys(config.prefix)
        self.token = f"{config.agent_id}:{instance}"
        self._slots = asyncio.Semaphore(self.options.max_tasks)
        self._running: dict[str, asyncio.Task] = {}
        self._env: RunEnv | None = None
        self._env_stack = contextlib.AsyncExitStack()
        self._env_lock = asyncio.Lock()
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._replace = self.redis.register_script(_REPLACE)
        self._waiting_logged = False
        self._refused: set[str] = set()
        self._noted: dict[str, None] = {}
        """Texts logged by :meth:`_note`, oldest first (at most NOTED_MAX)."""

    def answer_key(self, task_id: str) -> str:
        return f"{self.options.answer_prefix}{task_id}"

    def task_key(self, task_id: str) -> str:
        return f"{self.options.task_prefix}{task_id}"

    # -- the watch loop --------------------------------------------------------------------------

    async def run(self, stopping: asyncio.Event) -> None:
        backoff = Backoff()
        try:
            while not stopping.is_set():
                try:
                    await self._scan_once()
                    backoff.reset()
                    delay = self.options.poll
                except REDIS_DOWN:
                    delay = backoff.next()
                except (RedisError, ValueError, TypeError) as e:  # a key of a peer's making: log, go on
                    self._note(f"seed scan failed: {type(e).__name__}: {e}")
                    delay = self.options.poll
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stopping.wait(), delay)
        finally:
            running = list(self._running.values())
            for t in running:
                t.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._env_stack.aclose()  # the shared sandbox and memory, if a task opened them

    async def _scan_once(self) -> None:
        prefix = self.options.task_prefix
        pattern = _glob_escape(prefix) + "*"
        found = []
        async for k in self.redis.scan_iter(match=pattern, count=1000):
            try:
                found.append(text(k)[len(prefix) :])
            except UnicodeDecodeError:
                self._note(f"skipped the key {shown(k)}: its name is not UTF-8")
        candidates = [t for t in found if t and t not in self._running]
        if not candidates:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for task_id in candidates:
                (pipe.exists if self.team_key is None else pipe.get)(self.answer_key(task_id))
            answered = await pipe.execute(raise_on_error=False)
        todo = [t for t, got in zip(candidates, answered, strict=True) if not self._answered(t, got)]
        if not todo:
            return
        if not await self._team_available():
            if not self._waiting_logged:
                log.warning(
                    "%s: %d seed task(s) waiting: no live worker answers model jobs",
                    self.config.agent_id,
                    len(todo),
                )
                self._waiting_logged = True
            return
        self._waiting_logged = False
        for task_id in sorted(todo):
            if self._slots.locked():
                return
            lease_ms = int(self.options.lease * 1000)
            if await self.redis.set(self.keys.claim(task_id), self.token, nx=True, px=lease_ms):
                await self._slots.acquire()
                task = asyncio.create_task(self._lead(task_id))
                self._running[task_id] = task
                task.add_done_callback(lambda _t, tid=task_id: self._done(tid))

    def _answered(self, task_id: str, got: Any) -> bool:
        """Whether a task's answer key holds an answer that counts (``got``: EXISTS without a team key,
        GET with one: then only an answer it vouches for counts; another is logged once and replaced).
        An answer key holding another type than a string (``got`` is Redis's error) is logged once and
        the task skipped: no answer can be written there."""
        if isinstance(got, Exception):
            self._note(
                f"seed task {shown(task_id)} skipped: the answer key {shown(self.answer_key(task_id))} "
                f"is not a string ({type(got).__name__}: {got})"
            )
            return True
        if self.team_key is None or got is None:
            return bool(got)
        if self.team_key.vouches(ANSWER, self.answer_key(task_id), got):
            return True
        if task_id not in self._refused:
            self._refused.add(task_id)
            log.warning(
                "%s: seed task %s: the answer at %s is not signed with the team key; the team will answer it",
                self.config.agent_id,
                shown(task_id),
                shown(self.answer_key(task_id)),
            )
        return False

    def _note(self, what: str) -> None:
        """Log a warning about something a Redis peer wrote, once per distinct text (among the last
        NOTED_MAX: a peer writing ever new keys cannot grow the memory of them without bound)."""
        if what in self._noted:
            return
        if len(self._noted) >= NOTED_MAX:
            del self._noted[next(iter(self._noted))]
        self._noted[what] = None
        log.warning("%s: %s", self.config.agent_id, shown(what, limit=500))

    def _done(self, task_id: str) -> None:
        self._running.pop(task_id, None)
        self._slots.release()

    async def _team_available(self) -> bool:
        agents = await live_agents(self.redis, self.keys)
        return any(a.get("role") in ANSWERING_ROLES for a in agents.values())

    # -- one task --------------------------------------------------------------------------------

    async def _lead(self, task_id: str) -> None:
        """Orchestrate one claimed task; release the claim when done or stopped."""
        agent = self.config.agent_id
        keeper = asyncio.create_task(self._keep_claim(task_id, asyncio.current_task()))
        try:
            answer = await self._solve(task_id)
            await self._write_answer(task_id, answer)
            log.info("%s: seed task %s: %s", agent, shown(task_id), answer.get("status"))
        except asyncio.CancelledError:
            log.info("%s: seed task %s given up (another worker will take it over)", agent, shown(task_id))
            raise
        except Exception as e:  # never let one task take the worker down
            log.exception("%s: seed task %s failed", agent, shown(task_id))
            with contextlib.suppress(RedisError, MemdoorError):
                await self._write_answer(task_id, error_answer(task_id, e))
        finally:
            keeper.cancel()
            with contextlib.suppress(RedisError, asyncio.CancelledError):
                await self._release(keys=[self.keys.claim(task_id)], args=[self.token])

    async def _keep_claim(self, task_id: str, owner: asyncio.Task | None) -> None:
        """Renew the claim; if another worker has it (ours expired), stop leading this task."""
        lease_ms = int(self.options.lease * 1000)
        while True:
            await asyncio.sleep(self.options.lease / 3)
            try:
                kept = await self._renew(keys=[self.keys.claim(task_id)], args=[self.token, lease_ms])
            except REDIS_DOWN:
                continue
            if not kept:
                held_by = await self.redis.get(self.keys.claim(task_id))
                if held_by is None:  # lost with a Redis restart: take it again
                    await self.redis.set(self.keys.claim(task_id), self.token, nx=True, px=lease_ms)
                    continue
                log.warning(
                    "%s: lost the claim on %s to %s", self.config.agent_id, shown(task_id), shown(held_by)
                )
                if owner is not None:
                    owner.cancel()
                return

    async def _write_answer(self, task_id: str, answer: dict[str, Any]) -> None:
        """Write the answer (first answer wins; with a team key, the first signed one: a planted answer
        is replaced), then forget the run. Retries while Redis is down."""
        backoff = Backoff()
        key = self.answer_key(task_id)
        while True:
            try:
                if self.team_key is not None:
                    if await self._write_signed(key, task_id, answer):
                        return
                    continue  # the key changed meanwhile: look again
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.set(key, json.dumps(answer, ensure_ascii=False), nx=True)
                    pipe.delete(self.keys.run(task_id))
                    await pipe.execute()
                return
            except REDIS_DOWN:
                if backoff.failures > 60:
                    raise
                await asyncio.sleep(backoff.next())

    async def _write_signed(self, key: str, task_id: str, answer: dict[str, Any]) -> bool:
        """One attempt at writing a signed answer; False if the key changed since it was read."""
        assert self.team_key is not None
        current = await self.redis.get(key)
        if current is not None and self.team_key.vouches(ANSWER, key, current):
            await self.redis.delete(self.keys.run(task_id))  # another lead answered it first
            return True
        text_ = self.team_key.dumps(ANSWER, key, answer)
        return bool(await self._replace(keys=[key, self.keys.run(task_id)], args=[text_, current or ""]))

    async def _plan(self, task: SeedTask) -> RunPlan:
        """The task's run: id, models and team size, fixed by the first worker that led it, so that a
        takeover runs the very same team and reuses every stored result."""
        agents = await live_agents(self.redis, self.keys)
        answering = [
            v for v in agents.values() if v.get("role") in ANSWERING_ROLES and isinstance(v.get("model"), str)
        ]
        opts = self.options
        plan = {
            "run": uuid.uuid4().hex[:12],
            "models": [served_name(m, self.team_key) for m in task.models or ()]
            or sorted({v["model"] for v in answering})[:MAX_AGENTS],
            "agents": task.agents or opts.agents or max(1, min(MAX_DEFAULT_AGENTS, len(answering))),
        }
        key = self.keys.run(task.id)
        await self.redis.set(key, json.dumps(plan), nx=True)
        raw = await self.redis.get(key)
        if raw is None:  # gone meanwhile (Redis restarted without its data)
            return RunPlan.model_validate(plan)
        try:
            return RunPlan.model_validate_json(raw)
        except ValidationError as e:
            where, msg = first_problem(e)
            raise ProblemFormatError(key, None, where or None, f"the run plan is unusable: {msg}") from None

    async def _solve(self, task_id: str) -> dict[str, Any]:
        key = self.task_key(task_id)
        try:
            task = parse_task(task_id, await self.redis.get(key), key=key)
            problem = task_problem(task, key=key)
        except MemdoorError as e:
            return error_answer(task_id, e)
        except ResponseError as e:  # e.g. the key holds a hash, not a string
            reason = f"the task must be a string holding JSON ({type(e).__name__}: {e})"
            return error_answer(task_id, ProblemFormatError(key, None, None, reason))
        return await self._orchestrate(task, problem)

    async def _orchestrate(self, task: SeedTask, problem: Problem) -> dict[str, Any]:
        from memdoor.core.budget import Budget
        from memdoor.run.config import SolveConfig, StrategySpec
        from memdoor.run.solve import solve_problem

        opts, wcfg = self.options, self.config
        started = time.monotonic()
        try:
            plan = await self._plan(task)
        except ProblemFormatError as e:
            return error_answer(task.id, e)
        models = plan.models
        if not models:
            return error_answer(task.id, ModelError("no live worker answers model jobs"))
        try:
            strategy = task.strategy or opts.strategy
            spec = StrategySpec.parse(strategy, agents=plan.agents)
            check_team_size(spec.agents, strategy)
            config = SolveConfig(
                strategy=spec,
                models=models,
                max_tokens=opts.max_tokens,
                budget=Budget(seconds=opts.budget_seconds),
                test_inputs=SEED_TEST_INPUTS,
            )
        except (MemdoorError, ValueError) as e:
            return error_answer(task.id, e)
        run = RemoteRun(
            RemoteConfig(url=wcfg.redis, prefix=wcfg.prefix), run_id=plan.run, team_key=self.team_key
        )
        trace_key = f"{self.answer_key(task.id)}:trace"
        events: asyncio.Queue[TraceEvent | None] = asyncio.Queue()
        writer = asyncio.create_task(self._trace_writer(trace_key, events))
        try:
            env = await self._shared_env()
            task_env = dataclasses.replace(env, pool=run.pool(models), on_event=events.put_nowait)
            solution = await solve_problem(problem, config, task_env)
        finally:
            events.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 10)
            await run.aclose()
        answer = done_answer(
            task, problem, solution, trace_key, time.monotonic() - started, jobs=len(run.jobs)
        )
        with contextlib.suppress(RedisError):  # the work log is only a tally: without it, no `workers`
            answer["workers"] = await self._workers_of(run.run_id)
        return answer

    async def _workers_of(self, run_id: str) -> dict[str, int]:
        """Agent id → jobs it answered in the run (from the run's work log): a job whose model failed
        (``ok`` false: the endpoint refused the worker's credentials, or was down) is not counted, nor an
        entry that is not a JSON object naming its agent as text (any client can append to the log)."""
        counts: dict[str, int] = {}
        for raw in await self.redis.lrange(self.keys.work(run_id), 0, -1):
            try:
                entry = parse_json(raw)
            except ValueError:  # not JSON, not UTF-8, or nested too deeply
                continue
            agent = entry.get("agent") if isinstance(entry, dict) else None
            if isinstance(agent, str) and entry.get("ok") is True:
                counts[agent] = counts.get(agent, 0) + 1
        return dict(sorted(counts.items()))

    async def _trace_writer(self, key: str, events: asyncio.Queue) -> None:
        """Append trace events to ``memory:<id>:trace`` as they happen (best effort while Redis is down)."""
        await self.redis.delete(key)
        while (ev := await events.get()) is not None:
            with contextlib.suppress(*REDIS_DOWN):
                await self.redis.rpush(key, ev.model_dump_json())

    async def _shared_env(self) -> RunEnv:
        """The sandbox and memory this leader's tasks share: opened at the first task (by the one
        environment builder), closed when the leader stops."""
        from memdoor.run.env import open_env

        async with self._env_lock:
            if self._env is None:
                self._env = await self._env_stack.enter_async_context(
                    open_env(memory_url=self.config.redis, memory_options={"prefix": self.config.prefix})
                )
        return self._env


class RunPlan(BaseModel):
    """A task's run as stored at ``P run:<id>`` by the first lead (any client can write it: checked)."""

    run: str = Field(
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="Run id (letters, digits, ``_.-``): names the task's jobs and work log.",
    )
    models: list[str] = Field(max_length=MAX_AGENTS, description="Model specs of the team.")
    agents: int = Field(ge=1, le=MAX_AGENTS, strict=True, description="Team size.")


def error_answer(task_id: str, error: BaseException) -> dict[str, Any]:
    """The error object written at ``memory:<id>`` for a task the team could not take."""
    return {
        "id": task_id,
        "status": "error",
        "error": str(error),
        "error_type": type(error).__name__,
        "finished": time.time(),
    }


def done_answer(
    task: SeedTask,
    problem: Problem,
    solution: Solution,
    trace_key: str,
    seconds: float,
    *,
    jobs: int,
) -> dict[str, Any]:
    """The team's answer as written at ``memory:<id>``: status ``error``, with the reason, when the team
    produced no code (its models failed, or no candidate had a code block)."""
    r = solution.record()
    pv = r.public or r.verdict
    tests = solution.written_tests or problem.public_tests
    if r.written_tests:
        source = "team"
    elif problem.public_tests:
        source = "task"
    else:
        source = "none" if solution.tests_note is None else f"none ({solution.tests_note})"
    code = r.code if r.code.strip() else ""
    answer = {
        "id": task.id,
        "status": "done" if code else "error",
        "answer": f"```python\n{code}\n```" if code else "",
        "func_name": problem.func_name,
        **r.model_dump(mode="json", include=ANSWER_FIELDS),
        "code": code,
        "tests": {
            "source": source,
            "count": len(tests),
            "expected_outputs": any(t.output is not None for t in tests),
            "inputs": [t.input for t in tests][:20],
        },
        "public": None
        if pv is None
        else {"status": pv.status, "passed": pv.tests_passed, "total": pv.tests_total},
        "calls": r.totals.calls,
        "jobs": jobs,
        "tokens": r.totals.tokens,
        "seconds": round(seconds, 3),
        "trace": trace_key,
        "finished": time.time(),
    }
    if not code:
        answer["error"] = f"the team produced no code: {solution.why_no_code()}"
        answer["error_type"] = r.error_type or "NoSolution"
    return answer


ANSWER_FIELDS = {
    "code", "agent", "agents", "strategy", "confidence", "selection", "candidates", "stopped", "error",
    "trace_id",
}  # fmt: skip
"""Fields of :meth:`Solution.record` in a seed answer."""
