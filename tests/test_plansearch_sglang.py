"""`launchcard plan --engine sglang` reads each candidate as SGLang serves it (predict's SGLang path), and plans
whose verdict launchcard cannot decide are ranked after the decided ones and marked as such."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from helpers import run_cli
from launchcard.memory import MEMORY_UNDECIDED
from launchcard.plansearch import Candidate, Figures, Outcome, SearchSpace, Slo, checkpoint_option, pareto, search
from launchcard.plansearch._startup import command_argv
from launchcard.predict import Workload, sglang_command_facts

HF = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf"
GPT_OSS = HF / "openai" / "gpt-oss-120b" / "config.json"
MODEL = "openai/gpt-oss-120b"
# gpt-oss-20b for DP-attention plans on two GPUs: those at --ep-size 2 hold the experts as BF16 (SGLang upcasts the
# MXFP4 experts at load, memory._sglang_mxfp4.sglang_mxfp4_runner), so the 120b's (~107 GiB a GPU) leave no KV cache
# on an H100; at --ep-size 1 (also searched) they stay MXFP4
GPT_OSS_20B = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / \
    "openai--gpt-oss-20b_config.json"
MODEL_20B = "openai/gpt-oss-20b"


def _sglang(gpus: int = 2, model: str = MODEL, config: Path = GPT_OSS, **kw: object) -> SearchSpace:
    return SearchSpace(model=model, gpu="h100", gpus=gpus, gpus_per_node=8,
                       options=(checkpoint_option(model, config),), engine="sglang", max_num_seqs=(64,),
                       **kw)  # type: ignore[arg-type]


def _kv_pool_of_predict(*flags: str) -> int:
    """The KV pool `launchcard predict --engine sglang` reports for the plan of these options."""
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--engine", "sglang", "--concurrency", "8",
                  "--json", *flags)
    assert res.returncode == 0, res.stderr
    [line] = [f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "sglang-limits"]
    return int(line.split("KV pool ", 1)[1].split()[0])


def test_sglang_candidates_have_the_kv_pool_predict_gives_the_same_plan() -> None:
    """One H100 holds gpt-oss-120b's 65.8 GiB of weights with SGLang's default memory share (0.834): SGLang starts it
    with its own KV pool; vLLM's check (one 131,072-token request must fit) is not SGLang's and never rejects it."""
    space = _sglang()
    r = search(space, Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    def plan(tp: int, kv: str) -> Outcome:
        return next(o for o in r.outcomes if (o.candidate.tp, o.candidate.pp, o.candidate.kv_cache_dtype) == (tp, 1, kv)
                    and not o.candidate.ep and not getattr(o.candidate, "dp_attention", False))

    tp1 = plan(1, "auto")
    assert tp1.figures is not None and tp1.stage != "memory", tp1.reason
    assert not any(o.reason and "vLLM" in o.reason for o in r.outcomes)
    for o, flags in ((tp1, ("--tp", "1")), (plan(2, "fp8_e4m3"), ("--tp", "2", "--kv-cache-dtype", "fp8_e4m3"))):
        assert o.figures is not None
        facts = sglang_command_facts(command_argv(space, space.options[0], o.candidate), GPT_OSS, "h100")
        assert o.figures.kv_tokens == facts.kv_capacity_tokens == _kv_pool_of_predict(*flags)


def test_dp_attention_is_searched_where_sglangs_model_code_splits_attention() -> None:
    """GptOssForCausalLM's SGLang model file reads the attention-TP group (dp_attention.get_attention_tp_size):
    DP-attention plans (--enable-dp-attention, --dp-size dividing --tp-size, experts over the TP group) use the
    TP group's GPUs only, and each rank runs --max-running-requests / DP requests (tp_worker.py:292-300)."""
    space = _sglang(model=MODEL_20B, config=GPT_OSS_20B)
    r = search(space, Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    dpa = [o for o in r.outcomes if o.candidate.dp_attention]
    assert dpa and all(o.candidate.gpus == 2 and o.candidate.tp == 2 and o.candidate.dp == 2 for o in dpa)
    argv = command_argv(space, space.options[0], dpa[0].candidate)
    # SGLang 0.5.23 (the newest captured, the release checked): --attn-dp-size, its parser's form
    assert argv[argv.index("--attn-dp-size") + 1] == "2" and "--enable-dp-attention" not in argv
    assert "--dp-size" not in argv
    assert argv[argv.index("--ep-size") + 1] == argv[argv.index("--tp-size") + 1] == "2"
    assert all(o.figures is not None for o in dpa) and "DP2-attention" in dpa[0].candidate.label()
    assert any("DP attention (--attn-dp-size D, D dividing --tp-size" in f and "searched" in f for f in r.findings)


def test_dp_attention_is_written_in_the_flags_of_the_release_checked() -> None:
    """`plan --engine sglang` wrote `--dp-size D --enable-dp-attention`, which SGLang 0.5.23 (the release its
    parser checks the plans at) marks deprecated for --attn-dp-size (`check` warned flag-deprecated on every
    emitted DP-attention winner). --attn-dp-size where the release's captured parser has it (0.5.22+), the old
    form before it or for a release with no captured parser; predict reads both as the same plan."""
    old = _sglang(model=MODEL_20B, config=GPT_OSS_20B, engine_version="0.5.21")
    r = search(old, Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    dpa = next(o for o in r.outcomes if o.candidate.dp_attention)
    argv = command_argv(old, old.options[0], dpa.candidate)
    assert "--enable-dp-attention" in argv and argv[argv.index("--dp-size") + 1] == "2"
    assert "--attn-dp-size" not in argv
    assert any("DP attention (--dp-size D --enable-dp-attention, D dividing" in f for f in r.findings)
    new = _sglang(model=MODEL_20B, config=GPT_OSS_20B)
    argv_new = command_argv(new, new.options[0], dpa.candidate)
    assert argv_new[argv_new.index("--attn-dp-size") + 1] == "2"
    a, b = (sglang_command_facts(list(x), GPT_OSS_20B, "h100") for x in (argv, argv_new))
    assert a == b  # the same plan either way


def test_no_dp_attention_for_an_architecture_sglang_does_not_split(tmp_path: Path) -> None:
    from config_support import LLAMA8B

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B))
    space = SearchSpace(model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100", gpus=2, gpus_per_node=8,
                        options=(checkpoint_option("meta-llama/Llama-3.1-8B-Instruct", cfg),), engine="sglang",
                        max_num_seqs=(16,))
    r = search(space, Workload(512, 64, concurrency=8), Slo.parse("tpot=200"))
    assert r.outcomes and not any(o.candidate.dp_attention for o in r.outcomes)
    assert any("DP attention not searched" in f for f in r.findings)


def _undecided_space() -> SearchSpace:
    """vLLM 0.10.2, gpt-oss-120b at 32,768 tokens and a batch limit of 1024: on one H100 it fits only with
    FlashInfer's sampler (whose profile run samples 1024 rows), which the command does not show
    (tests/test_memory_kernels.py has the evidence): undecided; at a limit of 16 it fits.  One GPU: over two, DP2
    splits the experts over both, EP or not (memory.moe_split), and fits."""
    return SearchSpace(model=MODEL, gpu="h100", gpus=1, gpus_per_node=8,
                       options=(checkpoint_option(MODEL, GPT_OSS),), max_num_seqs=(16, 1024), engine_version="0.10.2",
                       max_model_len=32768)


def test_undecided_plans_are_ranked_after_every_decided_plan_and_say_why() -> None:
    r = search(_undecided_space(), Workload(1024, 256, concurrency=64), Slo.parse("tpot=100"))
    flags = [o.decided for o in r.ranked]
    assert True in flags and False in flags
    assert flags == sorted(flags, reverse=True)  # every decided plan first
    held = [o for o in r.ranked if not o.decided]
    assert all(o.candidate.tp == 1 and o.candidate.max_num_seqs == 1024 for o in held)
    assert all(o.undecided and MEMORY_UNDECIDED in o.undecided and "flashinfer" in o.undecided for o in held)
    # one of them predicts more tokens/s per GPU than a decided plan ranked above it
    decided = [o for o in r.ranked if o.decided]
    assert held[0].figures and decided[-1].figures
    assert held[0].figures.tok_s_per_gpu > decided[-1].figures.tok_s_per_gpu
    assert r.winner is not None and r.winner.decided
    assert any("cannot be decided" in f for f in r.findings)


def test_plan_text_and_json_mark_undecided_plans() -> None:
    # one GPU (as _undecided_space): DP2 splits gpt-oss's experts over two, EP or not, and fits
    args = ("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "1", "--engine-version", "0.10.2",
            "--max-model-len", "32768", "--concurrency", "64", "--slo", "tpot=100", "--max-num-seqs", "16",
            "--max-num-seqs", "1024")
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    assert "undecided, ranked last" in text.stdout and " ?checkpoint TP1 kv=" in text.stdout
    assert "Undecided plans (?)" in text.stdout and MEMORY_UNDECIDED in text.stdout
    doc = json.loads(run_cli(*args, "--json").stdout)
    assert doc["meeting_slo_undecided"] >= 1
    ranked = doc["ranked"]
    assert all("decided" in o and "undecided" in o for o in ranked)
    held = [o for o in ranked if not o["decided"]]
    assert held and all(MEMORY_UNDECIDED in o["undecided"] for o in held)
    assert ranked.index(held[0]) > max(i for i, o in enumerate(ranked) if o["decided"])
    assert doc["winner"]["decided"] is True


def _outcome(tp: int, per_gpu: float, per_user: float, undecided: str | None = None) -> Outcome:
    fig = Figures(ttft_ms=100.0, tpot_ms=1e3 / per_user, tok_s=per_gpu, tok_s_per_gpu=per_gpu,
                  tok_s_per_user=per_user, request_per_s=1.0, bound="decode memory")
    return Outcome(Candidate("checkpoint", tp, 1, 1, False, "auto", 64), figures=fig, undecided=undecided)


def test_an_undecided_plan_never_pushes_a_decided_one_off_the_pareto_front() -> None:
    decided, better = _outcome(2, 100.0, 10.0), _outcome(1, 200.0, 20.0, undecided="cannot decide whether it fits")
    front = pareto([decided, better])
    assert decided in front and better in front  # the undecided one beats it on both axes, and is kept, marked
    assert pareto([decided, _outcome(4, 50.0, 5.0, undecided="x")]) == (decided,)


def test_sweep_searches_sglang_plans(tmp_path: Path) -> None:
    """A sweep file's engines: [sglang] searches SGLang plans as `launchcard plan --engine sglang` does."""
    from launchcard.plansearch import load_sweep, run_task

    p = tmp_path / "fleet.yaml"
    p.write_text(f"""\
models:
  - {{id: {MODEL}, config: {GPT_OSS}}}
gpus:
  - {{gpu: h100, count: 2}}
workloads:
  - {{name: chat, isl: 1024, osl: 256, concurrency: 8, slo: "tpot=200"}}
engines: [vllm, sglang]
max_num_seqs: [64]
""")
    tasks = load_sweep(p)
    assert [t.engine for t in tasks] == ["vllm", "sglang"]
    row = run_task(tasks[1])
    assert row["engine"] == "sglang" and row["status"] == "ok"
    assert "max-running-requests" in row["winner"]["label"]
    r = search(_sglang(), Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    assert r.winner is not None and row["winner"]["label"] == r.winner.candidate.label()
    bad = tmp_path / "bad.yaml"
    bad.write_text(p.read_text().replace("[vllm, sglang]", "[vllm, tgi]"))
    res = run_cli("sweep", str(bad))
    assert res.returncode == 2 and f"{bad}:7" in res.stderr and "tgi" in res.stderr


def test_emit_target_that_cannot_write_an_sglang_plan_is_refused_before_the_search() -> None:
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--concurrency", "8",
                  "--slo", "tpot=100", "--engine", "sglang", "--emit", "truss")
    assert res.returncode == 2 and not res.stdout
    [line] = res.stderr.strip().splitlines()
    assert "--emit" in line and "truss target cannot express a plan served by sglang" in line
    assert "use one of shell, docker, compose, kubernetes" in line


def test_chunked_prefill_sizes_are_searched_as_sglang_applies_them() -> None:
    """--chunked-prefill-size values given are tried (SGLang's default otherwise); with DP attention each rank
    prefills chunk / DP tokens (server_args.py:1568-1574), as predict reads the same command."""
    import pytest

    from launchcard.errors import InputError
    from launchcard.plansearch._search import _plan_facts

    space = _sglang(chunked_prefill=(2048, 8192))
    r = search(space, Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    assert {o.candidate.chunk for o in r.outcomes} == {2048, 8192}
    for o in r.outcomes:
        if o.figures is None:
            continue
        argv = command_argv(space, space.options[0], o.candidate)
        assert argv[argv.index("--chunked-prefill-size") + 1] == str(o.candidate.chunk)
        facts = _plan_facts(space, space.options[0], o.candidate)
        assert not isinstance(facts, str)
        per_rank = o.candidate.chunk // (o.candidate.dp if o.candidate.dp_attention else 1)
        assert facts.max_num_batched_tokens == per_rank
        assert "chunked-prefill-size=" in o.candidate.label()
    with pytest.raises(InputError, match="SGLang's option"):
        search(SearchSpace(model=MODEL, gpu="h100", gpus=2, gpus_per_node=8,
                           options=(checkpoint_option(MODEL, GPT_OSS),), chunked_prefill=(4096,)),
               Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))


def test_sglang_sources_speculative_decoding_is_searched_and_emitted_with_their_flags() -> None:
    """The SGLang cookbook runs gpt-oss-120b with an EAGLE3 draft (GPT-OSS.mdx#L424: --speculative-algorithm
    EAGLE3 --speculative-draft-model-path lmsys/EAGLE3-gpt-oss-120b-bf16, no step count: SGLang picks 3 for
    GptOssForCausalLM, server_args.py:4649-4681): with --corpus such plans are searched, named in the findings
    with the source line, and the winner's command carries the source's flags."""
    corpus = HF.parent
    args = ("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--engine", "sglang",
            "--concurrency", "32", "--slo", "tpot=50", "--max-num-seqs", "64", "--corpus", str(corpus))
    doc = json.loads(run_cli(*args, "--json").stdout)
    specs = {(o["speculative"] or {}).get("method") for o in doc["outcomes"]}
    assert "eagle3" in specs
    assert any("eagle3 x3 as the SGLang source runs it" in f and "GPT-OSS.mdx#L424" in f for f in doc["findings"])
    res = run_cli(*args, "--emit", "shell")
    assert res.returncode == 0, res.stderr
    argv = res.stdout.split("args=(", 1)[1].split(")", 1)[0].split()
    if "--speculative-algorithm" in argv:  # the winner is speculative: the source's own flags, nothing invented
        assert argv[argv.index("--speculative-algorithm") + 1] == "EAGLE3"
        assert argv[argv.index("--speculative-draft-model-path") + 1] == "lmsys/EAGLE3-gpt-oss-120b-bf16"
        assert "--speculative-num-steps" not in argv and "--speculative-config" not in argv


def test_a_sources_speculative_offer_writes_the_sources_flags() -> None:
    from launchcard.merge import build_corpus
    from launchcard.plansearch import sglang_spec_offers, with_sglang_specs

    card = build_corpus(HF.parent, models=[MODEL]).card(MODEL)
    assert card is not None
    offers = sglang_spec_offers(card, MODEL, GPT_OSS)
    assert [(m, k) for m, k, _, _ in offers] == [("eagle3", 3)]
    space = replace(_sglang(), options=(with_sglang_specs(checkpoint_option(MODEL, GPT_OSS), offers),))
    c = Candidate("checkpoint", 2, 1, 1, False, "auto", 64, "eagle3", 3, engine="sglang")
    argv = command_argv(space, space.options[0], c)
    tail = argv[argv.index("--speculative-algorithm"):]
    assert list(tail) == ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
                          "lmsys/EAGLE3-gpt-oss-120b-bf16"]


def test_a_workload_longer_than_the_sglang_context_is_bad_input_in_sglangs_terms() -> None:
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--engine", "sglang",
                  "--concurrency", "2", "--isl", "10000", "--max-model-len", "8192", "--slo", "tpot=50")
    assert res.returncode == 2 and "vLLM" not in res.stderr
    [line] = res.stderr.strip().splitlines()
    assert "more than the 8192 the SGLang plans serve (--context-length)" in line and "up to 131072" in line


def test_a_recipe_models_sglang_search_takes_each_variants_checkpoint_not_its_vllm_flags() -> None:
    recipes = HF.parent / "vllm-recipes"
    res = run_cli("plan", MODEL, "--recipes", str(recipes), "--gpu", "h100", "--gpus", "2", "--engine", "sglang",
                  "--concurrency", "8", "--slo", "tpot=100", "--max-num-seqs", "64", "--emit", "shell")
    assert res.returncode == 0, res.stderr
    argv = res.stdout.split("args=(", 1)[1].split(")", 1)[0].split()
    assert argv[:3] == ["python3", "-m", "sglang.launch_server"] and "--tp-size" in argv
    assert not {"--tensor-parallel-size", "--max-num-seqs", "--speculative-config", "--quantization"} & set(argv)
    assert "default TP" in res.stderr  # the recipe's variant names the option


def test_listed_plans_carry_their_command_in_sglangs_flags() -> None:
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--engine", "sglang",
                  "--concurrency", "8", "--slo", "tpot=100", "--max-num-seqs", "64", "--json")
    doc = json.loads(res.stdout)
    for o in [doc["winner"], *doc["ranked"][:5], *doc["pareto"]]:
        cmd = o["command"]
        assert cmd[:3] == ["python3", "-m", "sglang.launch_server"]
        assert cmd[cmd.index("--tp-size") + 1] == str(o["tp"])
        assert cmd[cmd.index("--max-running-requests") + 1] == str(o["max_num_seqs"])
        assert ("--enable-dp-attention" in cmd) == o["dp_attention"]
        assert not {"--tensor-parallel-size", "--max-num-seqs", "--enable-expert-parallel"} & set(cmd)


def test_sglang_candidates_split_the_heads_over_the_attention_tp_size(tmp_path: Path) -> None:
    """SGLang candidates whose TP does not divide the heads went to the memory planner (its own heads check, or a
    layout line on the KV heads); they are now refused as `check` refuses the command, by SGLang's rule over the
    attention TP size: 12 heads refuse plain TP 8, not TP 8 with DP-attention ranks of TP 4, 2 or 1."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(qwen.read_text()), "num_attention_heads": 12, "num_key_value_heads": 4,
                                "head_dim": 128}))
    space = SearchSpace(model="acme/q12", gpu="h100", gpus=8, gpus_per_node=8,
                        options=(checkpoint_option("acme/q12", path),), engine="sglang", max_num_seqs=(16,),
                        engine_version="0.5.6.post2")
    r = search(space, Workload(256, 64, concurrency=4), Slo.parse("tpot=200"))
    tp8 = [o for o in r.outcomes if o.candidate.tp == 8]
    plain = [o for o in tp8 if not o.candidate.dp_attention]
    assert plain and all(o.stage == "check" and o.reason and o.reason.startswith(
        "[tp-heads] --tp-size 8 does not divide the 12 attention heads (SGLang's") for o in plain)
    assert {o.candidate.dp for o in tp8 if o.candidate.dp_attention and o.stage != "check"} == {2, 4, 8}
    [note] = [f for f in r.findings if f.startswith("sglang plans:")]
    assert "attention TP size (not vLLM's start-up rules; flags not checked: no captured parser of SGLang " \
        "0.5.6.post2" in note


def test_an_emitted_dp_attention_winner_checks_clean_at_its_release() -> None:
    """The emitted SGLang winner runs DP attention in the flags of its release: `launchcard check` at that release
    finds no deprecated flag in it (0.5.23's --enable-dp-attention warning rode along into every artifact).  On a
    B200, where FlashInfer's MXFP4 runner keeps gpt-oss-120b's experts MXFP4 at --ep-size 2 (on an H100 SGLang
    upcasts them to BF16 there, memory._sglang_mxfp4.sglang_mxfp4_runner, and the DP-attention plan no longer
    wins)."""
    load = ["--slo", "tpot=200", "--concurrency", "64", "--isl", "1024", "--osl", "256", "--top", "1",
            "--emit", "shell"]
    for version, flags in ((None, ["--attn-dp-size", "2"]), ("0.5.21", ["--dp-size", "2", "--enable-dp-attention"])):
        extra = ["--engine-version", version] if version else []
        res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "b200", "--gpus", "2", "--engine", "sglang",
                      *load, *extra)
        assert res.returncode == 0, res.stderr
        # the search's text (stderr: the artifacts are printed) gives the winner's command
        line = next(x for x in res.stderr.splitlines() if "sglang.launch_server" in x and "--tp-size" in x)
        words = line.split()
        assert " ".join(flags) in line and words[words.index("--tp-size") + 1] == "2", line
        assert "deprecat" not in res.stdout.lower() and f"#   {flags[0]} 2: derived" in res.stdout, res.stdout
        cmd = words[words.index("python3"):]
        check = run_cli("check", "--engine", "sglang", "--config", str(GPT_OSS), "--gpu", "b200", "--", *cmd)
        if version is None:  # `check` reads the newest captured parser, the release the plan was checked at
            assert check.returncode == 0 and "warning" not in check.stdout, check.stdout


V32 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / \
    "deepseek-ai--DeepSeek-V3.2_config.json"


def test_a_dp_plan_sglang_turns_into_dp_attention_is_not_ranked_on_gpus_it_does_not_use() -> None:
    """SGLang 0.5.6-0.5.7 (launchcard's rules for a release not given) turns DP attention on itself for DeepSeek
    Sparse Attention (server_args.py _handle_model_specific_adjustments, 0.5.6.post2 L1002-1004): `--tp-size 4
    --dp-size 2` is one server on 4 GPUs, not two replicas on 8. `predict` of the row's command says 4 GPUs; the
    plan must not rank it as a plan of all 8 (it had 8 GPUs and twice predict's throughput)."""
    space = SearchSpace(model="deepseek-ai/DeepSeek-V3.2", gpu="mi325x", gpus=8, gpus_per_node=8,
                        options=(checkpoint_option("deepseek-ai/DeepSeek-V3.2", V32),), engine="sglang",
                        max_num_seqs=(32,))
    r = search(space, Workload(4096, 512, concurrency=64), Slo.parse("tpot=200"))
    forced = [o for o in r.outcomes if o.candidate.dp > 1 and not o.candidate.dp_attention]
    assert forced
    for o in forced:
        assert o.figures is None and o.reason and "DP attention" in o.reason, (o.candidate.label, o.reason)
    ok = [o for o in r.outcomes if o.figures is not None and o.candidate.dp_attention]
    assert ok  # the same servers, searched as what they are: DP attention inside the TP group


def test_dp_attention_is_searched_at_ep_size_1_too_where_gpt_oss_keeps_its_experts_mxfp4() -> None:
    """The search tried SGLang DP attention only with --ep-size = --tp-size, where SGLang upcasts gpt-oss's MXFP4
    experts to BF16 on an H100 (~107 GiB a GPU for the 120b on 2 GPUs: no KV cache).  SGLang takes DP attention at
    --ep-size 1 too (its experts TP-split over the group, parallel_state.py L1636-1637), where triton_kernel keeps
    them MXFP4: that plan is searched now, and it serves."""
    space = _sglang()
    r = search(space, Workload(1024, 256, concurrency=8), Slo.parse("tpot=200"))
    dpa = [o for o in r.outcomes if o.candidate.dp_attention]
    ep1 = [o for o in dpa if not o.candidate.ep]
    assert ep1 and [o for o in dpa if o.candidate.ep], [o.candidate.label() for o in dpa]
    argv = command_argv(space, space.options[0], ep1[0].candidate)
    assert "--ep-size" not in argv and argv[argv.index("--attn-dp-size") + 1] == "2"
    assert all(o.figures is not None for o in ep1), [(o.candidate.label(), o.reason) for o in ep1]
    assert all(o.figures is None for o in dpa if o.candidate.ep)  # BF16 experts leave no room on an H100
    facts = sglang_command_facts(argv, GPT_OSS, "h100")
    assert not any("BF16 weights at load" in f.message for f in facts.findings)
    assert any("--ep-size 1 (the experts TP-split over the group)" in f for f in r.findings)
