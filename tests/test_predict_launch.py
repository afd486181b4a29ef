"""predict/_launch.py: the one chain `launchcard predict MODEL` and the web's panel run. A plan timed on one engine
is judged and named in that engine's terms: an SGLang plan is not refused by vLLM's memory accounting, a
TensorRT-LLM launch carries no verdict of the `vllm serve` form it is read from, the options given on top replace
the command's own values (no flag twice), and the text title is the command as a shell takes it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.predict import sglang_words, vllm_words

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
LOAD = ["--isl", "256", "--osl", "64", "--concurrency", "4", "--json"]
FIGURES = ("ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s", "output_tok_per_s_per_gpu", "gpus", "bound")


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_a_plan_on_another_engine_is_not_refused_by_vllms_memory_accounting(engine: str) -> None:
    """gpt-oss-120b on one H100: vLLM's start-up check refuses it (one 131,072-token request's KV does not fit
    vLLM's 0.92 share), SGLang and TensorRT-LLM size their own pools and serve it. `predict MODEL --engine E`
    refused it with vLLM's rule while `predict --config --engine E` on the same plan gave figures."""
    plan = run_cli("predict", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--engine", engine,
                   "--tp", "1", *LOAD)
    bare = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--engine", engine, "--tp", "1", *LOAD)
    assert plan.returncode == 0 and bare.returncode == 0, plan.stderr + bare.stderr
    got, want = json.loads(plan.stdout), json.loads(bare.stdout)
    assert {k: got[k] for k in FIGURES} == {k: want[k] for k in FIGURES}
    text = json.dumps(got.get("verdict"))
    assert "memory-does-not-fit" not in text and "check_enough_kv_cache_memory" not in text
    if engine == "sglang":  # its verdict says who judged its memory, and no vLLM share
        codes = [f["code"] for f in got["verdict"]["findings"]]
        assert "memory-sglang" in codes and "memory-fits" not in codes
        assert "--gpu-memory-utilization" not in text
    else:  # the verdict would judge the `vllm serve` form (vLLM's image, parsers, rules), not trtllm-serve
        assert "verdict" not in got and got["command"][0] == "trtllm-serve"


def test_a_vllm_plan_is_still_refused_by_vllms_start_up_check() -> None:
    res = run_cli("predict", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "1", *LOAD)
    assert res.returncode == 1 and "check_enough_kv_cache_memory" in res.stderr
    line = res.stderr.strip()
    assert "\n" not in line and line.count("1852728 KV tokens") == 1, line  # the fix said once


def test_trtllm_findings_state_no_vllm_default() -> None:
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--engine", "trtllm", *LOAD)
    assert res.returncode == 0, res.stderr
    said = [f["message"] for f in json.loads(res.stdout)["findings"]]
    assert not any("vLLM's default" in m for m in said), said
    assert any(m.startswith("--max_seq_len not given") for m in said)


@pytest.mark.parametrize(("engine", "flag", "given"), [("sglang", "--tp-size", "--tp 1"), ("vllm",
                                                       "--tensor-parallel-size", "--tp 1")])
def test_an_option_given_on_top_replaces_the_plans_own_value(engine: str, flag: str, given: str) -> None:
    """The derived Qwen3-8B plan on h100 has TP 1 written; `--tp 2` on top was appended (the flag twice, and the
    verdict warned of its own command's duplicate flag)."""
    res = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(QWEN), "--gpu", "h100", "--engine", engine,
                  "--tp", "2", *LOAD)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["command"].count(flag) == 1 and got["command"][got["command"].index(flag) + 1] == "2"
    assert "flag-duplicate" not in {f["code"] for f in got["verdict"]["findings"]}


def test_words_replace_every_spelling_of_a_flag() -> None:
    assert vllm_words(["vllm", "serve", "m", "-tp", "8", "--max-num-seqs=4", "--enforce-eager"],
                      {"tp": 2, "max_num_seqs": 16, "enforce_eager": True}, '{"method":"ngram"}') == [
        "vllm", "serve", "m", "--enforce-eager", "--tensor-parallel-size", "2", "--max-num-seqs", "16",
        "--speculative-config", '{"method":"ngram"}']
    assert sglang_words(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4",
                         "--max-running-requests", "8"], {"tp": 2, "max_num_seqs": 32}) == [
        "python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "2", "--max-running-requests",
        "32"]
    eager = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--disable-cuda-graph"]
    assert sglang_words(eager, {"enforce_eager": True}) == eager  # a switch already on is not written twice


def test_the_text_title_is_the_command_a_shell_takes() -> None:
    """The title printed `--speculative-config {"model": ...}` unquoted: pasted into a shell, the JSON lost its
    quotes. plan prints the same command quoted (shlex)."""
    spec = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
    args = ["predict", "Qwen/Qwen3-8B", "--config", str(QWEN), "--gpu", "h100", "--speculative-config", spec,
            "--isl", "256", "--osl", "64", "--concurrency", "4"]
    text, js = run_cli(*args), run_cli(*args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    title = text.stdout.splitlines()[0]
    assert title.endswith(shlex.join(json.loads(js.stdout)["command"])), title
    assert shlex.split(title.split(": ", 1)[1])[-1] == spec


def test_trtllm_words_replace_the_commands_own_options() -> None:
    from launchcard.predict import trtllm_words

    assert trtllm_words(["trtllm-serve", "m", "--tp_size", "4", "--free_gpu_memory_fraction=0.8",
                         "--enable_chunked_prefill"], {"tp": 2, "expert_parallel": True}, 2, 0.5, True) == [
        "trtllm-serve", "m", "--enable_chunked_prefill", "--tp_size", "2", "--ep_size", "2",
        "--kv_cache_free_gpu_memory_fraction", "0.5"]
    # any name trtllm-serve takes for the option (the parser has no trtllm-serve spec tying them together)
    assert trtllm_words(["trtllm-serve", "m", "--tensor_parallel_size", "4", "--moe_expert_parallel_size", "4",
                         "--pipeline_parallel_size", "2"], {"tp": 2, "pp": 1, "expert_parallel": True}, 2) == [
        "trtllm-serve", "m", "--tp_size", "2", "--pp_size", "1", "--ep_size", "2"]


def test_a_recipe_models_sglang_plan_reads_the_corpus_config_next_to_the_recipes() -> None:
    """`predict openai/gpt-oss-120b --recipes R --hardware h100 --engine sglang` said "no recipe for
    'openai/gpt-oss-120b'" (it has one) and looked for config.json only in the Hub caches; the recipe plan's
    verdict and `plan --engine sglang` read it from the corpus next to the recipes, and now so does this."""
    recipes = SHARED / "corpus" / "vllm-recipes"
    load = ["--hardware", "h100", "--engine", "sglang", *LOAD]
    via_recipes = run_cli("predict", "openai/gpt-oss-120b", "--recipes", str(recipes), *load)
    via_config = run_cli("predict", "openai/gpt-oss-120b", "--config", str(GPT_OSS), *load)
    assert via_recipes.returncode == 0 and via_config.returncode == 0, via_recipes.stderr + via_config.stderr
    got, want = json.loads(via_recipes.stdout), json.loads(via_config.stdout)
    assert got["command"] == want["command"] and {k: got[k] for k in FIGURES} == {k: want[k] for k in FIGURES}


@pytest.mark.parametrize(("engine", "said", "not_said"), [
    ("sglang", "--tp-size 3 does not divide the 32 attention heads (SGLang's", "vLLM"),
    ("vllm", "--tensor-parallel-size 3 does not divide the 32 attention heads (vLLM refuses", "SGLang")])
def test_a_heads_split_refusal_is_the_plans_engines(engine: str, said: str, not_said: str) -> None:
    """An SGLang plan with a TP that does not divide the heads was refused as "(vLLM refuses to start)" quoting
    vLLM's check: its own engine's assert (SGLang's attention classes) is now named, in its flag's name."""
    res = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(QWEN), "--gpu", "h100", "--engine", engine,
                  "--tp", "3", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 1 and "\n" not in line and said in line, line
    assert not_said not in line.split("[tp-heads]")[1].split("fix:")[0], line


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("form", ["options", "model"])
def test_a_tp_that_does_not_divide_the_heads_is_a_failed_check_on_every_form(engine: str, form: str) -> None:
    """`predict --config ... --tp 3` exited 2 (the memory planner's refusal, read as bad input) where `predict MODEL
    ... --tp 3` exited 1 (the plan's verdict): a TP the engine refuses to start is a plan that fails its check (1),
    one line, on both forms, `check`'s own [tp-heads] line for every engine (TensorRT-LLM's was the memory
    planner's line, naming predict's --tp; now its flag --tp_size and its own assert)."""
    model = ["Qwen/Qwen3-8B"] if form == "model" else []
    res = run_cli("predict", *model, "--config", str(QWEN), "--gpu", "h100", "--engine", engine, "--tp", "3", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 1 and res.stdout == "" and "\n" not in line, (res.returncode, line)
    assert "does not divide the 32 attention heads" in line and "Traceback" not in line
    flag = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "trtllm": "--tp_size"}[engine]
    assert "[tp-heads]" in line and f"{flag} 3 does not divide the 32 attention heads" in line, line
    assert ("attention.py at 00547a25" in line) == (engine == "trtllm"), line


def test_an_sglang_command_with_dp_attention_is_judged_over_its_attention_tp(tmp_path: Path) -> None:
    """12 heads on --tp-size 8: SGLang refuses it, but not with two DP-attention ranks (attention TP 4) for an
    architecture whose attention reads that size (Qwen3): predict times the latter and refuses the former (exit 1)."""
    cfg = {**json.loads(QWEN.read_text()), "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    base = "python3 -m sglang.launch_server --model-path acme/q12 --tp-size 8"
    ok = run_cli("predict", "--config", str(path), "--gpu", "h100", "--command",
                 f"{base} --dp-size 2 --enable-dp-attention", *LOAD)
    assert ok.returncode == 0, ok.stderr
    refused = run_cli("predict", "--config", str(path), "--gpu", "h100", "--command", base, *LOAD)
    assert refused.returncode == 1 and "[tp-heads] --tp-size 8 does not divide the 12 attention heads" in refused.stderr
    # ranks that do not divide the TP group: SGLang's assert, a failed check as well (was exit 2, bad input)
    uneven = run_cli("predict", "--config", str(path), "--gpu", "h100", "--command",
                     f"{base} --dp-size 3 --enable-dp-attention", *LOAD)
    assert uneven.returncode == 1 and "[dp-attention-split] --dp-size 3 does not divide --tp-size 8" in uneven.stderr


@pytest.mark.parametrize(("args", "flag"), [
    (["--tp", "3", "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
    (["--tp", "3", "--kv-cache-dtype", "nope"], "--kv-cache-dtype"),
    (["--command", "python3 -m sglang.launch_server --model-path q --tp-size 3 --max-running-requests 0"],
     "--command: --max-running-requests"),
    (["--command", "python3 -m sglang.launch_server --model-path q --tp-size 8 --dp-size 3 --enable-dp-attention "
                   "--mem-fraction-static 1.5"], "--command: --mem-fraction-static"),
])
def test_bad_input_is_said_before_what_the_engine_refuses(args: list[str], flag: str) -> None:
    """A command both badly formed and refused (TP 3 over 32 heads, DP ranks not dividing TP) exited 1 with the
    refusal once predict checked the split before reading the settings: bad input is exit 2, naming its flag."""
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", *args, *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and line.startswith(f"launchcard: error: {flag}"), line
    assert "[tp-heads]" not in line and "[dp-attention-split]" not in line, line


def test_an_option_given_on_top_of_an_sglang_plan_is_named_as_typed() -> None:
    """`--engine sglang --gpu-memory-utilization 1.5` said `--mem-fraction-static: ...`, a flag not typed: the
    option typed is named, SGLang's flag it sets stays in the rule; in a --command, the flag is said at --command
    as every --command error is (it was named alone, an option predict does not take)."""
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--engine", "sglang",
                  "--gpu-memory-utilization", "1.5", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and line.startswith("launchcard: error: --gpu-memory-utilization: "), line
    assert "--mem-fraction-static must be in (0, 1) (1.5)" in line and "\n" not in line
    own = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--command",
                  "python3 -m sglang.launch_server --model-path q --mem-fraction-static 1.5", *LOAD)
    assert own.returncode == 2 and own.stderr.startswith(
        "launchcard: error: --command: --mem-fraction-static must be in (0, 1) (1.5)"), own.stderr


@pytest.mark.parametrize("flags", ["--tp-size 0", "--dp-size -2 --enable-dp-attention", "--pp-size 0",
                                   "--attn-dp-size -1", "--ep-size 0"])
def test_an_sglang_command_with_a_gpu_count_below_1_is_bad_input(flags: str) -> None:
    """`--tp-size 0` was predicted as TP 1 and `--dp-size -2 --enable-dp-attention` without DP (exit 0): figures
    for a launch no one can run; a count below 1 is bad input naming the flag."""
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--command",
                  f"python3 -m sglang.launch_server --model-path q {flags}", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and "\n" not in line, (res.returncode, line)
    assert line.startswith(f"launchcard: error: --command: {flags.split()[0]}: must be >= 1"), line


@pytest.mark.parametrize(("flags", "named"), [("--tensor-parallel-size 0", "--tensor-parallel-size"),
                                              ("--pipeline-parallel-size 0", "--pipeline-parallel-size"),
                                              ("--max-num-seqs 0", "--max-num-seqs")])
def test_a_bad_value_in_a_vllm_command_is_named_by_its_flag(flags: str, named: str) -> None:
    """`--command 'vllm serve q --tensor-parallel-size 0'` said `--tp: tp must be >= 1`: predict's option, not
    the flag in the command; then the flag alone (`--tensor-parallel-size: ...`), an option predict does not take:
    now at --command, the flag in the rule, as every --command error says it."""
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--command", f"vllm serve q {flags}", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and line.startswith(f"launchcard: error: --command: {named} must be >= 1"), line
    assert "\n" not in line


def test_mtp_on_a_checkpoint_without_mtp_layers_is_bad_input(tmp_path: Path) -> None:
    """vLLM drafts "mtp" with the target's own MTP layers and raises "Unsupported speculative method" on a model
    type with none; predict timed it as one MTP layer at an assumed acceptance. Now one line, exit 2, on the
    option and the command forms; ngram on the same checkpoint still predicts."""
    from config_support import LLAMA8B

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    base = ["predict", "--config", str(cfg), "--gpu", "h100", "--isl", "256", "--osl", "32", "--concurrency", "2"]
    spec = '{"method": "mtp", "num_speculative_tokens": 1}'
    for res in (run_cli(*base, "--speculative-config", spec),
                run_cli(*base, "--command", shlex.join(["vllm", "serve", "m", "--speculative-config", spec]))):
        lines = [x for x in res.stderr.splitlines() if x.strip()]
        assert res.returncode == 2 and len(lines) == 1 and not res.stdout, res.stderr
        assert "--speculative-config" in lines[0] and "MTP layers" in lines[0] and "'mtp'" in lines[0]
    ok = run_cli(*base, "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 2}')
    assert ok.returncode == 0, ok.stderr


def test_mtp_on_a_checkpoint_without_mtp_layers_is_one_verdict_on_every_surface(tmp_path: Path) -> None:
    """memory said "fits" where predict and check refuse MTP without MTP layers, and predict refused
    {"method": "mtp", "model": ...} (a draft named: the target's layers are not read) where check says ok; now
    memory exits 2 in predict's words, and a named draft is taken by all three."""
    from config_support import LLAMA8B

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    bare = '{"method": "mtp", "num_speculative_tokens": 1}'
    mem = run_cli("memory", "--config", str(cfg), "--gpu", "h100", "--speculative-config", bare)
    assert mem.returncode == 2 and "drafts with the checkpoint's own MTP layers" in mem.stderr, mem.stdout
    named = '{"method": "mtp", "model": "org/draft-mtp", "num_speculative_tokens": 1}'
    pred = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "256", "--osl", "32",
                   "--concurrency", "2", "--speculative-config", named)
    chk = run_cli("check", "--config", str(cfg), "--", "vllm", "serve", "m", "--speculative-config", named)
    mem = run_cli("memory", "--config", str(cfg), "--gpu", "h100", "--speculative-config", named)
    assert pred.returncode == chk.returncode == mem.returncode == 0, (pred.stderr, chk.stdout, mem.stderr)


@pytest.mark.parametrize("form", [["--dp-size", "{d}", "--enable-dp-attention"], ["--attn-dp-size", "{d}"]])
def test_dp_attention_refusals_name_the_flag_the_command_states_the_ranks_by(tmp_path: Path, form: list[str]) -> None:
    """`--attn-dp-size` (SGLang 0.5.22+, what `plan` now writes at 0.5.23) is read as `--dp-size D
    --enable-dp-attention` by predict and check alike, and their refusals of it named `--dp-size`, a flag the
    command does not have: each names the flag typed, the same line from both."""
    cfg = {**json.loads(QWEN.read_text()), "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    for tp, d, said in (("4", "3", f"[dp-attention-split] {form[0]} 3 does not divide --tp-size 4"),
                        ("16", "2", f"the attention TP size 8 (--tp-size 16 / {form[0]} 2 with DP attention) does "
                                    "not divide the 12 attention heads")):
        cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "acme/q12", "--tp-size", tp,
               *[w.format(d=d) for w in form]]
        pred = run_cli("predict", "--config", str(path), "--gpu", "h100", "--command", " ".join(cmd), *LOAD)
        assert pred.returncode == 1 and said in pred.stderr, pred.stderr
        check = run_cli("check", "--engine", "sglang", "--config", str(path), "--", *cmd)
        error = next(x for x in check.stdout.splitlines() if x.startswith("error:"))
        assert check.returncode == 1 and said.split("] ", 1)[-1] in error, check.stdout
        other = "--attn-dp-size" if form[0] == "--dp-size" else "--dp-size "
        assert other not in pred.stderr.split("(evidence")[0] and other not in error.split("(evidence")[0]


def test_a_quantization_flag_the_engine_swaps_is_a_warning_finding_as_check_says(tmp_path: Path) -> None:
    """`predict --quantization fp8` on gpt-oss's MXFP4 checkpoint at a vLLM release that serves it as gpt_oss_mxfp4
    (from 0.20) gave the same figures as without the flag and said nothing, where `launchcard check` warns
    quant-flag-ignored (leftq): the prediction now carries check's warning; a release that refuses it is exit 1."""
    cfg = Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "openai--gpt-oss-20b_config.json"
    base = ("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "512", "--osl", "64", "--concurrency", "4",
            "--json")
    plain, flagged = run_cli(*base), run_cli(*base, "--quantization", "fp8")
    assert plain.returncode == 0 and flagged.returncode == 0, flagged.stderr
    said = [f for f in json.loads(flagged.stdout)["findings"] if f["code"] == "quant-flag-ignored"]
    assert len(said) == 1 and said[0]["severity"] == "warning" and "drop --quantization" in said[0]["message"]
    assert not any(f["code"] == "quant-flag-ignored" for f in json.loads(plain.stdout)["findings"])
    old = run_cli(*base, "--quantization", "fp8", "--engine-version", "0.11.0")
    assert old.returncode == 1 and "[quant-method-mismatch]" in old.stderr
