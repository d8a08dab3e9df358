"""``memfs eval NAME``: the built-in evaluations, one per memory layer.

Each prints a table (or, with ``--json``, one JSON document on stdout) and exits 1 when
its result is under the threshold it states, so CI can run the quick ones; bad input
exits 2 through the usual ``MemfsError`` path. Everything heavy (torch, the agent stack)
is imported inside the commands, so ``memfs --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memfs.agent.evals.splits import CONSTRAINT_FILES, DECISION_FILES, PROFILE_FILES
from memfs.cli.common import State, cli, console, err_console, pass_state, print_json
from memfs.errors import BadInputError

if TYPE_CHECKING:
    from memfs.agent.evals.report import EvalReport
    from memfs.agent.llm.base import LLM
    from memfs.embed import Embedder

HOME_HELP = "Run in this folder and keep it (default: a temporary home, removed after)."


@cli.group("eval")
def eval_group() -> None:
    """Run a built-in evaluation (planted, decision, isolation, pins, constraints, profile, longmemeval)."""


def eval_embedder(state: State) -> Embedder | None:
    """The embedding model the evals use: ``None`` lets each eval load (and time) the
    default model itself; another configured model is loaded here. Tests replace this
    function to share one model load across every eval they run."""
    from memfs.embed import DEFAULT_MODEL, default_embedder

    if state.config.embed_model == DEFAULT_MODEL:
        return None
    return default_embedder(state.config.embed_model)


def configured_llm(state: State) -> LLM:
    """The configured provider (the offline one unless a key or endpoint is set)."""
    from memfs.agent.llm.registry import get_llm

    return get_llm(state.config.llm_provider, state.config.llm_model)


def finish(report: EvalReport, as_json: bool) -> None:
    """Print the table or the JSON document; exit 1 when the eval did not pass."""
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(report.table())
    if not report.passed:
        raise click.exceptions.Exit(1)


def progress(as_json: bool) -> Any:
    """Progress lines on stderr for long runs (never on stdout: --json stays one document)."""
    def show(line: str) -> None:
        err_console.print(f"[dim]{line}[/dim]")

    return None if as_json else show


@eval_group.command("planted")
@click.option("--seed", default=7, show_default=True, type=int, help="Small-talk seed.")
@click.option("--messages", "n_messages", default=1000, show_default=True, type=int,
              help="Messages over 20 sessions (below 952 the small talk is thinned).")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def planted(state: State, seed: int, n_messages: int, home: Path | None, as_json: bool) -> None:
    """Planted facts: 1,000 messages through the pipeline, then ask about each fact."""
    from memfs.agent.evals.planted import run_planted

    report = run_planted(seed, n_messages, home=home, embedder=eval_embedder(state),
                         config=state.config, llm=configured_llm(state),
                         progress=progress(as_json))
    finish(report, as_json)


@eval_group.command("decision")
@click.option("--split", type=click.Choice(list(DECISION_FILES)), default="all",
              show_default=True, help="all: the 60 dev and held-out probes; blind1-: later sets.")
@click.option("--model", "with_model", is_flag=True,
              help="Plan as a turn does, with the learned reading of the message (loads the model).")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def decision(state: State, split: str, with_model: bool, as_json: bool) -> None:
    """The retrieval decision on 60 probes (30 need memory, 30 do not), or a later set."""
    from memfs.agent.evals.decision import (
        format_table,
        load_split,
        model_decider,
        run_decision_eval,
    )

    probes = load_split(split)
    if with_model:
        from memfs.embed import default_embedder

        model = eval_embedder(state) or default_embedder()
        report = run_decision_eval(model_decider(model), probes,
                                   name=f"offline rules + learned reading, {split}")
    else:
        report = run_decision_eval(probes=probes, name=f"offline rules, {split}")
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(format_table(report))
    if not report.passed:
        raise click.exceptions.Exit(1)


@eval_group.command("isolation")
@click.option("--pairs", "n_pairs", default=12, show_default=True, type=int,
              help="Pairs under one home (2-16).")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def isolation(state: State, n_pairs: int, home: Path | None, as_json: bool) -> None:
    """Isolation: no probe of one pair ever surfaces another pair's text."""
    from memfs.agent.evals.isolation import run_isolation

    finish(run_isolation(n_pairs, home=home, embedder=eval_embedder(state),
                         config=state.config), as_json)


@eval_group.command("pins")
@click.option("--messages", "n_messages", default=1000, show_default=True, type=int,
              help="Messages replayed after the pin (even).")
@click.option("--stride", default=20, show_default=True, type=int,
              help="Also check the context every N messages.")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def pins(state: State, n_messages: int, stride: int, home: Path | None, as_json: bool) -> None:
    """Pins: a pin set at message 1 is in every context, across compactions and dreams."""
    from memfs.agent.evals.pins import run_pins

    if n_messages < 2 or n_messages % 2:
        raise BadInputError(f"--messages: must be an even number of at least 2, got {n_messages}")
    if stride < 2:
        raise BadInputError(f"--stride: must be at least 2, got {stride}")
    finish(run_pins(n_messages, stride=stride, home=home, embedder=eval_embedder(state),
                    config=state.config), as_json)


@eval_group.command("constraints")
@click.option("--split", type=click.Choice(list(CONSTRAINT_FILES)),
              default="test",
              show_default=True,
              help="test: the first blind probe set; dev: the set the constraint search was tuned "
                   "on; blind2 to blind28: fresh blind sets (each measured once, never tuned on); dev2, dev3: "
                   "requests asked after a live window (before), for tuning.")
@click.option("--messages", "n_messages", default=1600, show_default=True, type=int,
              help="Messages of small talk around the constraints (even).")
@click.option("--together", default=5, show_default=True, type=click.IntRange(min=1),
              help="Constraints per pair (5: one per domain; 25: all in one pair).")
@click.option("--dream", "dreamed", is_flag=True,
              help="Dream the history as compaction would (offline extractor) and count the "
                   "constraint by any route: a summary line, a retrieved card, or the message.")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def constraints(state: State, split: str, n_messages: int, together: int, dreamed: bool,
                home: Path | None, as_json: bool) -> None:
    """Constraints: a suggestion request brings the constraint that rules it out into context."""
    if dreamed:
        from memfs.agent.evals.constraint_dream import run_dreamed as run
    else:
        from memfs.agent.evals.constraints import run_constraints as run

    finish(run(split, n_messages, together=together, home=home, embedder=eval_embedder(state)),
           as_json)


@eval_group.command("profile")
@click.option("--split", type=click.Choice(list(PROFILE_FILES)), default="dev", show_default=True,
              help="dev: written with the code, tuned on; dev2: chat-register small talk "
                   "(typos, lowercase, emoji), for calibration; blind to blind17 (chat register): "
                   "measured once, never tuned on.")
@click.option("--messages", "n_messages", default=1600, show_default=True, type=int,
              help="Messages of small talk around the standing facts (even).")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def profile(state: State, split: str, n_messages: int, home: Path | None, as_json: bool) -> None:
    """Profile: after weeks of small talk the summary holds the standing facts, within budget."""
    from memfs.agent.evals.profile import run_profile

    finish(run_profile(split, n_messages, home=home, embedder=eval_embedder(state)), as_json)


@eval_group.command("longmemeval")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--limit", type=int, help="Only the first N questions (every type kept).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Vector cache (default ~/.cache/memfs-bench).")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def longmemeval(state: State, path: Path, limit: int | None, cache_dir: Path | None,
                as_json: bool) -> None:
    """Retrieval recall on a LongMemEval slice (a .json.gz file)."""
    from memfs.agent.evals.report import run_recall_eval

    if not path.is_file():
        raise BadInputError(f"{path}: no such file")
    if limit is not None and limit < 1:
        raise BadInputError(f"--limit: must be at least 1, got {limit}")
    finish(run_recall_eval(path, limit, embedder=eval_embedder(state), cache_dir=cache_dir),
           as_json)
