"""Team topologies: single, parallel, sequential, shared, hybrid, sstar, cascade, adaptive.

Every strategy gets the *public view* of a problem (no hidden tests), a :class:`~memdoor.agents.team.Team`
and a :class:`~memdoor.strategies.context.RunContext` (judge, memory, selector, budget, ledger,
trace), and returns a :class:`~memdoor.core.solution.Solution`. Grading on hidden tests happens afterwards,
in :mod:`memdoor.run.grade`.

============  ==========================================================  ===========================
name          what the team does                                          options (its ``Config``)
============  ==========================================================  ===========================
single        agent 0, one attempt, LiveCodeBench's prompt (baseline)      —
parallel      every agent attempts at once; the selector chooses          —
sequential    implement → review → revise; reviewers take turns           rounds
shared        drafts in shared memory, rounds of reading and refining     rounds, peers,
                                                                          stop_when_all_pass
hybrid        parallel attempts + repair on public tests + agent-written  repair_rounds, inputs,
              inputs that split candidate groups (S*)                     referee, duel,
                                                                          referee_orders
sstar         hybrid, and a vote without a majority is settled by an       as hybrid (referee on)
              agent judging the two leading groups' outputs on one input
              (``duel=split``: any vote the inputs split, as S* does;
              ``referee_orders=both``: asked in both orders, kept if consistent)
cascade       cheap agents draft and vote; the first (strong) agents      strong, agree
              draft only when no confident majority passes the tests
adaptive      parallel attempts in waves, stopping once enough agree      first, wave, agree
              and pass the public tests
============  ==========================================================  ===========================

All options also include ``logprobs``. The shared skeleton (:mod:`.base`) turns a spent budget into
``stopped="budget"`` keeping every candidate made, and drops an agent whose model fails for good
(``Solution.failures``) while the others go on. Prompts are templates in :mod:`memdoor.prompts`.
"""
