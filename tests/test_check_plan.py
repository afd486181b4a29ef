"""``launchcard.check.check_plan``: one test group per rule family.

Real corpus recipes where the corpus has the case; synthetic configs and plans for models and
hardware the corpus does not name (a 40-head model, a 128-head model on 3 nodes, an MI355X plan).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from launchcard.check import Finding, Verdict, check_command, check_plan, read_argv
from launchcard.resolve import Choice, Command, ResolvedPlan, resolve

FIXTURES = Path(__file__).parent / "fixtures" / "check"
LLAMA_70B = FIXTURES / "llama-3.3-70b-config.json"
GLM = "zai-org/GLM-5.3-Flash"


def _config(heads: int, kv: int | None = None, layers: int = 48, experts: int | None = None) -> dict[str, object]:
    cfg: dict[str, object] = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": heads * 128,
                              "intermediate_size": heads * 128 * 3, "num_hidden_layers": layers,
                              "num_attention_heads": heads, "num_key_value_heads": kv or heads, "head_dim": 128,
                              "vocab_size": 32000, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
    if experts:
        cfg["num_local_experts"] = experts
    return cfg


def _plan(argv: list[str], *, hardware: str = "h100", gpus: int = 8, brand: str = "NVIDIA",
          generation: str = "hopper", nodes: int = 1, env: dict[str, str] | None = None,
          model_id: str = "acme/Unseen-Model", deploy: str = "single_node") -> ResolvedPlan:
    """A plan for a model and hardware no recipe names."""
    cmd = Command(role="single", argv=("vllm", "serve", model_id, *argv), env=dict(env or {}))
    return ResolvedPlan(model=model_id, model_id=model_id, variant="default", hardware=hardware, strategy=None,
                        node_count=nodes, deploy_type=deploy, docker_image="vllm/vllm-openai:v0.32.0",  # type: ignore[arg-type]
                        brand=brand, generation=generation, gpus_per_node=gpus, commands=(cmd,))


def _codes(verdict: Verdict, severity: str | None = None) -> list[str]:
    return [f.code for f in verdict.findings if severity is None or f.severity == severity]


def _one(verdict: Verdict, code: str) -> Finding:
    hits = [f for f in verdict.findings if f.code == code]
    assert hits, [f.one_line() for f in verdict.findings]
    return hits[0]


# -- types -----------------------------------------------------------------------------------------------

def test_verdict_ok_exit_code_and_order() -> None:
    err = Finding(severity="error", code="x", message="m", evidence="e", fix="f", role="single")
    warn = Finding(severity="warning", code="y", message="m", evidence="e")
    assert Verdict((warn,)).ok and Verdict((warn,)).exit_code == 0 and Verdict((warn,)).status == "warning"
    assert not Verdict((err, warn)).ok and Verdict((err, warn)).exit_code == 1
    assert err.one_line() == "error [x] single: m (evidence: e); fix: f"
    assert Verdict(()).to_json() == {"ok": True, "exit_code": 0, "status": "ok", "label": "ok", "findings": []}
    with pytest.raises(dataclasses.FrozenInstanceError):
        err.code = "z"  # type: ignore[misc]


# -- flags -----------------------------------------------------------------------------------------------

def test_flag_findings_carry_the_spec_version(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="nvidia/NVIDIA-Nemotron-Nano-9B-v2", hardware="h200"), provenance=False)
    f = _one(check_plan(plan, recipes=recipe_repo, memory=False), "flag-unknown-parser")
    from launchcard.flagspec import shipped_index

    newest = shipped_index()["vllm"][-1]  # an open version is checked against the newest captured spec
    assert f.severity == "error" and f"vllm {newest}" in f.evidence and f.fix


def test_engine_version_rules_apply_only_to_a_named_version(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100"), provenance=False)
    open_version = check_plan(plan, recipes=recipe_repo, memory=False)
    assert open_version.ok and _one(open_version, "engine-version").evidence.endswith("GLM-5.3-Flash.yaml#L23")
    pinned = check_plan(plan, recipes=recipe_repo, memory=False, engine_version="0.32.0")
    assert "flag-needs-nightly" in _codes(pinned, "error")


# -- nodes and topology ----------------------------------------------------------------------------------

def test_three_nodes_give_tp_24_which_128_heads_refuse(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100", strategy="multi_node_tp", node_count=3),
                   provenance=False)
    assert read_argv(plan.commands[0].argv).tp == 24
    bad = check_plan(plan, recipes=recipe_repo, config=_config(128, 8), memory=False)
    f = _one(bad, "tp-heads")
    assert f.severity == "error" and "128 attention heads" in f.message and "num_attention_heads" in f.evidence
    assert "head" in (f.role or "") and "worker" in (f.role or "")  # one finding for every role it concerns
    ok = check_plan(plan, recipes=recipe_repo, config=_config(96, 8), memory=False)
    assert "tp-heads" not in _codes(ok) and _one(ok, "kv-heads-replicated").severity == "info"


def test_hundred_nodes_exceed_what_the_builder_plans(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100", strategy="multi_node_tp", node_count=100),
                   provenance=False)
    assert read_argv(plan.commands[0].argv).tp == 800
    v = check_plan(plan, recipes=recipe_repo, memory=False)
    assert _one(v, "too-many-nodes").severity == "error" and v.exit_code == 1


def test_forty_heads_on_eight_gpus() -> None:
    assert check_plan(_plan(["--tensor-parallel-size", "8"]), config=_config(40, 8), memory=False).ok
    kv = check_plan(_plan(["--tensor-parallel-size", "8"]), config=_config(40, 10), memory=False)
    assert _one(kv, "tp-kv-heads").severity == "error"  # 10 KV heads: neither divisible by 8 nor divides it
    two_nodes = _plan(["--tensor-parallel-size", "16", "--nnodes", "2"], nodes=2, deploy="multi_node")
    f = _one(check_plan(two_nodes, config=_config(40, 8), memory=False), "tp-heads")
    assert f.severity == "error" and "40 attention heads" in f.message and f.fix.endswith("5, 8, 10, 20, 40")


@pytest.mark.parametrize(("kv", "tp", "code", "severity"), [
    (12, 8, "tp-kv-heads", "error"),       # 12 >= 8 and 12 % 8 != 0
    (3, 8, "tp-kv-heads", "error"),        # 8 % 3 != 0: no even replication
    (2, 8, "kv-heads-replicated", "info"),  # 8 % 2 == 0: replicated 4x
])
def test_kv_head_rules(kv: int, tp: int, code: str, severity: str) -> None:
    v = check_plan(_plan(["--tensor-parallel-size", str(tp)]), config=_config(48, kv), memory=False)
    assert _one(v, code).severity == severity


def test_pp_and_expert_rules() -> None:
    assert "pp-exceeds-layers" in _codes(check_plan(_plan(["-tp", "1", "-pp", "8"]), config=_config(8, layers=4),
                                                    memory=False), "error")
    uneven = check_plan(_plan(["-tp", "8", "--enable-expert-parallel"]), config=_config(32, 8, experts=60),
                        memory=False)
    assert _one(uneven, "ep-uneven").severity == "warning"
    dense = check_plan(_plan(["-tp", "8", "--enable-expert-parallel"]), config=_config(32, 8), memory=False)
    assert _one(dense, "ep-dense-model").severity == "error"  # vLLM refuses it at start-up
    wide = check_plan(_plan(["-tp", "8", "-dp", "2", "--data-parallel-size-local", "1",
                             "--enable-expert-parallel"], nodes=2, deploy="multi_node"),
                      config=_config(32, 8, experts=8), memory=False)
    assert "ep-exceeds-experts" in _codes(wide, "error")


def test_process_larger_than_the_node_and_short_visible_devices() -> None:
    big = check_plan(_plan(["--tensor-parallel-size", "16"]), memory=False)
    assert _one(big, "exceeds-node").severity == "error"
    dp = check_plan(_plan(["--tensor-parallel-size", "2", "--data-parallel-size", "8"]), memory=False)
    assert "16 GPUs" in _one(dp, "exceeds-node").message
    short = check_plan(_plan(["-tp", "4"], env={"CUDA_VISIBLE_DEVICES": "0,1"}), memory=False)
    assert _one(short, "visible-devices-short").severity == "error"


def test_non_scalable_hardware_cannot_join_nodes(recipe_repo) -> None:
    plan = _plan(["-tp", "1"], hardware="rtx_pro_6000", gpus=1, generation="blackwell", nodes=2,
                 deploy="multi_node")
    v = check_plan(plan, recipes=recipe_repo, memory=False)
    f = _one(v, "not-scalable")
    assert f.severity == "error" and "taxonomy.yaml#L" in f.evidence


def test_mi355x_plan_is_judged_like_any_gpu(recipe_repo, shared_dir) -> None:
    plan = resolve(recipe_repo, Choice(model="openai/gpt-oss-120b", hardware="mi355x"), provenance=False)
    v = check_plan(plan, recipes=recipe_repo)
    assert v.ok and _one(v, "memory-fits").message.startswith("fits on mi355x")
    synthetic = _plan(["-tp", "8"], hardware="mi355x", brand="AMD", generation="amd")
    assert "tp-heads" in _codes(check_plan(synthetic, recipes=recipe_repo, config=_config(36, 4), memory=False))


# -- memory ----------------------------------------------------------------------------------------------

def test_variant_that_needs_805_gb_on_8_h100(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="deepseek-ai/DeepSeek-V3", hardware="h100", strategy="single_node_tp"),
                   provenance=False)
    f = _one(check_plan(plan, recipes=recipe_repo, memory=False), "vram-shortfall")
    assert f.severity == "error" and "805 GB" in f.message and "640 GB" in f.message
    assert "DeepSeek-V3.yaml#L" in f.evidence and "taxonomy.yaml#L" in f.evidence and "--nodes 2" in f.fix
    two = resolve(recipe_repo, Choice(model="deepseek-ai/DeepSeek-V3", hardware="h100", strategy="multi_node_tp",
                                      node_count=2), provenance=False)
    assert "vram-shortfall" not in _codes(check_plan(two, recipes=recipe_repo, memory=False))


def test_llama_70b_on_one_b200_with_a_context_whose_kv_cannot_fit(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="meta-llama/Llama-3.3-70B-Instruct", hardware="b200"), provenance=False)
    v = check_plan(plan, recipes=recipe_repo, config=LLAMA_70B)
    f = _one(v, "memory-does-not-fit")
    assert f.severity == "error" and "131,072" in f.message and "hardware catalog b200" in f.evidence and f.fix
    shorter = dataclasses.replace(plan, commands=(dataclasses.replace(
        plan.commands[0], argv=(*plan.commands[0].argv, "--max-model-len", "32768")),))
    assert "memory-fits" in _codes(check_plan(shorter, recipes=recipe_repo, config=LLAMA_70B))


def test_memory_is_never_silent(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100"), provenance=False)
    f = _one(check_plan(plan, recipes=recipe_repo), "memory-not-checked")
    assert f.severity == "info" and f.message.startswith(f"memory not checked: no config.json for {GLM}")
    gpt = resolve(recipe_repo, Choice(model="openai/gpt-oss-120b", hardware="h100"), provenance=False)
    skipped = check_plan(gpt, recipes=recipe_repo, memory=False)  # corpus hf/ has it, planning not asked
    assert _one(skipped, "memory-not-planned").evidence.endswith("openai/gpt-oss-120b/config.json")


# -- sizing ----------------------------------------------------------------------------------------------

def test_tp1_on_an_eight_gpu_node_is_flagged_as_wasteful(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="meta-llama/Llama-3.3-70B-Instruct", hardware="b200"), provenance=False)
    f = _one(check_plan(plan, recipes=recipe_repo, memory=False), "idle-gpus")
    assert f.severity == "warning" and "uses 1 of the 8 GPUs" in f.message


# -- recipe quirks ---------------------------------------------------------------------------------------

def test_resolver_warnings_become_findings_with_their_recipe_line(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100"), provenance=False)
    quirks = [f for f in check_plan(plan, recipes=recipe_repo, memory=False).findings if f.code == "recipe-quirk"]
    assert len(quirks) == len(plan.warnings) >= 1
    assert all(f.severity == "warning" for f in quirks)
    assert any(f.evidence == "models/zai-org/GLM-5.3-Flash.yaml#L79" for f in quirks)


def test_a_finding_line_reads_back_to_the_same_line() -> None:
    full = Finding(severity="warning", code="recipe-quirk", message="meta.x names 'y': its settings never apply",
                   evidence="models/a/b.yaml#L13", fix="read the recipe entry (line 13)")
    bare = Finding(severity="info", code="memory-not-checked", role="single", message="memory not checked: no config",
                   evidence="looked in: hf/a/b/config.json (none)")
    for f in (full, bare):
        back = Finding.from_line(f.one_line())
        assert back is not None and back.one_line() == f.one_line() and back.severity == f.severity
    assert Finding.from_line(full.one_line()) == full
    assert Finding.from_line("not a finding") is None


# -- install notes ---------------------------------------------------------------------------------------

def test_the_recipes_install_notes_ride_with_the_verdict(recipe_repo) -> None:
    # GLM-5.3-Flash L29: the NVIDIA image the note names is not the command's (docker_image L25: nightly)
    plan = resolve(recipe_repo, Choice(model=GLM, hardware="h100"), provenance=False)
    note = _one(check_plan(plan, recipes=recipe_repo, memory=False, flags=False), "install-note")
    assert note.severity == "info" and note.evidence == "models/zai-org/GLM-5.3-Flash.yaml#L29"
    assert "docker install note: NVIDIA: use vllm/vllm-openai:glm53-flash until support lands" in note.message
    assert "(this plan's image: vllm/vllm-openai:nightly)" in note.message and "--image" in note.fix
    # Hy3: a docker note and a pip note, each with its own line; a recipe without notes has none
    hy3 = resolve(recipe_repo, Choice(model="tencent/Hy3"), provenance=False)
    notes = [f for f in check_plan(hy3, recipes=recipe_repo, memory=False, flags=False).findings
             if f.code == "install-note"]
    assert [n.message.split(":")[0] for n in notes] == ["the recipe's docker install note",
                                                        "the recipe's pip install note"]
    assert notes[0].evidence != notes[1].evidence and all("#L" in n.evidence for n in notes)
    plain = resolve(recipe_repo, Choice(model="Qwen/Qwen3-14B"), provenance=False)
    assert "install-note" not in _codes(check_plan(plain, recipes=recipe_repo, memory=False, flags=False))


# -- CPU profile -----------------------------------------------------------------------------------------

def test_cpu_profile_is_not_judged_with_gpu_accounting(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="meta-llama/Llama-3.2-3B-Instruct", hardware="xeon6"), provenance=False)
    v = check_plan(plan, recipes=recipe_repo, memory=False)
    assert "cpu-backend" in _codes(v, "info")
    assert not {"idle-gpus", "exceeds-node", "vram-shortfall"} & set(_codes(v))
    wide = dataclasses.replace(plan, commands=(dataclasses.replace(
        plan.commands[0], argv=("vllm", "serve", plan.model_id, "-tp", "16")),))
    assert "exceeds-node" not in _codes(check_plan(wide, recipes=recipe_repo, memory=False))


def test_cpu_profile_memory_uses_the_cpu_kv_space(recipe_repo) -> None:
    plan = _plan(["-tp", "1"], hardware="xeon6", gpus=4, brand="Intel", generation="cpu",
                 env={"VLLM_CPU_KVCACHE_SPACE": "40"})
    v = check_plan(plan, recipes=recipe_repo, config=_config(16, 4))
    found = _one(v, "memory-fits")
    assert "fits on xeon6" in found.message and "GiB/NUMA node" in found.message  # the catalog's CPU entry
    (_, mplan), = v.memory_plans
    assert mplan.device == "cpu" and mplan.kv_cache_gib_per_gpu == 40  # VLLM_CPU_KVCACHE_SPACE


# -- quantization ----------------------------------------------------------------------------------------

def test_fp4_env_from_a_blackwell_block_on_the_default_fp8_checkpoint(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="deepseek-ai/DeepSeek-V3", hardware="b200"), provenance=False)
    f = _one(check_plan(plan, recipes=recipe_repo, memory=False), "quant-env-mismatch")
    assert f.severity == "warning" and "VLLM_USE_FLASHINFER_MOE_FP4=1" in f.message and "fp8" in f.message
    assert "DeepSeek-V3.yaml#L84" in f.evidence and "blackwell" in f.evidence
    fp4 = resolve(recipe_repo, Choice(model="deepseek-ai/DeepSeek-V3", variant="fp4", hardware="b200"),
                  provenance=False)
    assert "quant-env-mismatch" not in _codes(check_plan(fp4, recipes=recipe_repo, memory=False))


def test_quantization_rule_generalises_to_config_and_fp8(recipe_repo) -> None:
    # an FP8 MoE switch on an unquantized checkpoint, judged from its config.json (no recipe)
    plan = _plan(["-tp", "2"], env={"VLLM_USE_FLASHINFER_MOE_FP8": "1"})
    f = _one(check_plan(plan, config=_config(16, 8), memory=False), "quant-env-mismatch")
    assert "unquantized" in f.message and "no quantization_config" in f.evidence
    mx = dict(_config(16, 8), quantization_config={"quant_method": "mxfp4"})
    assert "quant-env-mismatch" in _codes(check_plan(
        _plan(["-tp", "2"], env={"VLLM_USE_FLASHINFER_MOE_NVFP4": "1"}), config=mx, memory=False))
    assert "quant-env-mismatch" not in _codes(check_plan(
        _plan(["-tp", "2"], env={"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}), config=mx, memory=False))


# -- config lookup and a bare command --------------------------------------------------------------------

def test_config_is_found_in_the_corpus_hf_folder(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="moonshotai/Kimi-K2.5", hardware="h200"), provenance=False)
    v = check_plan(plan, recipes=recipe_repo)
    assert "hf/moonshotai/Kimi-K2.5/config.json" in _one(v, "memory-fits").evidence


def test_a_bare_command_from_another_source(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(_config(40, 8)))
    v = check_command(["sglang", "serve", "--model-path", "acme/x", "--tp-size", "16"], engine="sglang", gpus=8,
                      config=cfg)
    assert {"exceeds-gpus", "tp-heads"} <= set(_codes(v, "error"))
    assert check_command(["vllm", "serve", "acme/x", "-tp", "4"], gpus=4, config=cfg).ok


# -- issue 20, item 4: what vLLM refuses at start-up from the config and the flags ----------------------------

def test_max_model_len_above_the_models_length_is_refused_unless_allowed() -> None:
    v = check_plan(_plan(["--max-model-len", "65536"]), config=_config(32))
    f = _one(v, "max-model-len-over-model")
    assert f.severity == "error" and "32,768" in f.message and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in f.fix
    assert "vllm/config/model.py" in f.evidence and "User-specified max_model_len (65536)" in f.evidence
    # the memory verdict agrees without repeating the refusal, and its advice stays within the limit
    mem = _one(v, "memory-not-judged")
    assert "vLLM refuses to start" in mem.message and "65536" not in mem.fix
    assert "memory-does-not-fit" not in _codes(v)
    allowed = check_plan(_plan(["--max-model-len", "65536"], env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}),
                         config=_config(32))
    assert "max-model-len-over-model" not in _codes(allowed)
    assert "max-model-len-over-model" not in _codes(check_plan(_plan(["--max-model-len", "32768"]),
                                                               config=_config(32)))


def test_quantization_dtype_and_gpu_refusals() -> None:
    v = check_plan(_plan(["--quantization", "awq", "--dtype", "float32"]), config=_config(32))
    assert "torch.float32 is not supported for quantization method awq" in _one(v, "quant-dtype").evidence
    t4 = check_plan(_plan(["--quantization", "mxfp4"], hardware="t4", gpus=1, generation="turing"),
                    config=_config(32))
    assert "Minimum capability: 80. Current capability: 75." in _one(t4, "quant-gpu").evidence


@pytest.mark.parametrize(("engine", "flag", "who"), [("sglang", "--tp-size", "SGLang"),
                                                     ("vllm", "--tensor-parallel-size", "vLLM")])
def test_a_kv_heads_split_refusal_names_the_plans_engines_flag(engine: str, flag: str, who: str) -> None:
    """The heads refusal named SGLang's --tp-size for an SGLang plan while the KV-heads refusals beside it kept
    vLLM's --tensor-parallel-size."""
    from launchcard.check._config import parse_config
    from launchcard.check._limits import tp_findings

    [split] = tp_findings(parse_config(_config(40, 10), "c.json"), 4, "serve", engine)  # 10 KV heads over 4
    [repl] = tp_findings(parse_config(_config(48, 3), "c.json"), 8, "serve", engine)  # 3 KV heads on 8 GPUs
    for f in (split, repl):
        assert f.code == "tp-kv-heads" and f.message.startswith(f"{flag} ") and who in f.fix, f


def _qwen3(heads: int = 12, kv: int = 4, arch: str = "Qwen3ForCausalLM") -> dict[str, object]:
    return {**_config(heads, kv), "architectures": [arch], "model_type": "qwen3"}


SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "acme/m"]


@pytest.mark.parametrize(("flags", "arch", "refused"), [
    (["--tp-size", "8"], "Qwen3ForCausalLM", "--tp-size 8 does not divide the 12 attention heads"),
    (["--tp-size", "8", "--dp-size", "2", "--enable-dp-attention"], "Qwen3ForCausalLM", None),  # attention TP 4
    (["--tp-size", "8", "--attn-dp-size", "2"], "Qwen3ForCausalLM", None),  # 0.5.22+ spelling of the same
    (["--tp-size", "8", "--dp-size", "2"], "Qwen3ForCausalLM", "--tp-size 8 does not divide"),  # replicas
    (["--tp-size", "8", "--dp-size", "2", "--enable-dp-attention"], "LlamaForCausalLM",
     "--tp-size 8 does not divide"),  # LlamaAttention splits over the whole TP group
    (["--tp-size", "16", "--dp-size", "2", "--enable-dp-attention"], "Qwen3ForCausalLM",
     "the attention TP size 8 (--tp-size 16 / --dp-size 2 with DP attention) does not divide the 12 attention heads"),
])
def test_sglang_heads_are_judged_over_the_attention_tp_size_sglang_splits_them_over(
        flags: list[str], arch: str, refused: str | None) -> None:
    """`check` tested an SGLang command's heads against the whole --tp-size; with DP attention SGLang's attention
    layers split (and assert) the heads over tp / dp, where the model file reads that size."""
    v = check_command([*SGLANG, *flags], engine="sglang", config=_qwen3(arch=arch))
    errors = [f for f in v.findings if f.code.startswith("tp-") and f.severity == "error"]
    if refused is None:
        assert not errors, errors
        return
    [f] = errors
    assert f.code == "tp-heads" and refused in f.message and "qwen3.py L69-71" in f.evidence, f
    assert ("dp_attention.py L227-235" in f.evidence) == ("attention TP size" in f.message)


def test_dp_attention_ranks_that_do_not_divide_the_tp_group_are_sglangs_refusal() -> None:
    v = check_command([*SGLANG, "--tp-size", "8", "--dp-size", "3", "--enable-dp-attention"], engine="sglang",
                      config=_qwen3())
    [f] = [f for f in v.findings if f.severity == "error"]
    assert f.code == "dp-attention-split" and "--dp-size 3 does not divide --tp-size 8" in f.message, f
    assert "server_args.py L1564-1570" in f.evidence and "parallel_hook.py" in f.evidence


def test_an_sglang_plans_flags_are_checked_against_its_stated_release() -> None:
    """SGLang plans were flag-checked against the newest captured parser (0.5.23) whatever release they state: a
    flag the stated release lacks is reported against that release, and the flags of a release whose parser is not
    captured are not judged by another's (said as a finding), as `predict --command` leaves them."""
    plan = dataclasses.replace(_plan([]), engine="sglang", commands=(
        Command(role="single", argv=(*SGLANG, "--tp-size", "1", "--attn-dp-size", "2"), env={}),))
    old = check_plan(plan, config=_qwen3(), engine_version="0.5.5.post3", memory=False)
    [f] = [f for f in old.findings if f.code.startswith("flag-") and f.severity == "error"]
    assert "--attn-dp-size" in f.message and "0.5.5.post3" in f.message and "sglang 0.5.5.post3" in f.evidence, f
    assert not [f for f in check_plan(plan, config=_qwen3(), memory=False).findings
                if f.code.startswith("flag-") and f.severity == "error"]
    rules = check_plan(plan, config=_qwen3(), engine_version="0.5.6.post2", memory=False)
    [note] = [f for f in rules.findings if f.code == "flags-not-checked"]
    assert note.message.startswith("flags not checked: no captured parser of SGLang 0.5.6.post2"), note
    assert not [f for f in rules.findings if f.code.startswith("flag-")]  # never judged by another release


def test_an_sglang_plans_ep_size_is_read_by_its_split_rules_and_its_memory() -> None:
    """An SGLang plan's --ep-size (limits.sglang_ep_size, as predict reads it) reaches check's EP rules (SGLang's
    refusal ep-uneven) and its memory plan (experts over the TP group), whose vLLM uneven-EP note is not SGLang's."""
    def verdict(flags: list[str], experts: int) -> Verdict:
        plan = dataclasses.replace(_plan([]), engine="sglang", commands=(
            Command(role="single", argv=(*SGLANG, *flags), env={}),))
        return check_plan(plan, config=_config(32, 8, experts=experts))

    import re

    def weights(v: Verdict) -> float:
        [f] = [f for f in v.findings if f.code in ("memory-fits", "memory-does-not-fit")]
        return float(re.findall(r"weights ([0-9.]+)", f.message)[0])

    uneven = verdict(["--tp-size", "8", "--ep-size", "8"], 60)
    assert _one(uneven, "ep-uneven").severity == "error" and "SGLang asserts" in _one(uneven, "ep-uneven").message
    assert not [f for f in uneven.findings if f.code == "memory-warning" and "heaviest rank" in f.message]
    # the memory plan splits the experts over --ep-size (a rank holds 8 of the 60 whole), not each over TP (7.5)
    assert weights(uneven) > weights(verdict(["--tp-size", "8"], 60))
    even = verdict(["--tp-size", "8", "--ep-size", "8"], 64)
    assert "ep-uneven" not in _codes(even)
    planned = [f.code for f in even.findings if f.code.startswith("memory-")]
    assert planned and "memory-not-planned" not in planned, planned


def test_an_unknown_speculative_method_is_said_once_on_a_plan(tmp_path: Path) -> None:
    """A plan whose command names a method vLLM 0.32.0 does not take: the flag finding
    (flag-bad-config-value on --speculative-config.method) and the start-up rule (speculative-method, memory's and
    predict's words) said the same fact twice; the bare `check` drops the flag's repeat, a plan now too."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(_config(32)))
    plan = _plan(["--speculative-config", '{"method": "bogus", "model": "org/d", "num_speculative_tokens": 1}'])
    verdict = check_plan(plan, config=cfg, engine_version="0.32.0", memory=False)
    said = [f for f in verdict.findings if "bogus" in f.message]
    assert [f.code for f in said] == ["speculative-method"], [f.one_line() for f in said]


def test_sglang_memory_holds_gpt_oss_experts_as_bf16_where_no_mxfp4_runner_runs() -> None:
    # SGLang upcasts MXFP4 experts to BF16 at load unless triton_kernel (--ep-size 1) or FlashInfer runs them
    # (memory._sglang_mxfp4.sglang_mxfp4_runner): check's SGLang memory plan counts them so
    config = Path("/work/shared/corpus/hf/openai/gpt-oss-120b/config.json")
    if not config.is_file():
        pytest.skip("gpt-oss-120b's config.json is not in the shared corpus here")

    def verdict(ep: int) -> Verdict:
        cmd = Command(role="single", argv=("python3", "-m", "sglang.launch_server", "--model-path",
                                           "openai/gpt-oss-120b", "--tp-size", "8", "--ep-size", str(ep)), env={})
        plan = dataclasses.replace(_plan([], model_id="openai/gpt-oss-120b"), commands=(cmd,), engine="sglang")
        return check_plan(plan, config=config)

    def weights(v: Verdict) -> float:
        return float(_one(v, "memory-fits").message.split("weights ")[1].split(" GiB")[0])

    ep1, ep8 = verdict(1), verdict(8)
    assert "memory-sglang-bf16-experts" not in _codes(ep1)
    said = _one(ep8, "memory-sglang-bf16-experts")
    assert said.severity == "info" and "--ep-size 8" in said.message
    assert weights(ep8) > 3 * weights(ep1)


def test_a_published_sglang_gpt_oss_command_with_triton_kernel_at_ep_above_1_fails_its_verdict() -> None:
    """A card's SGLang command (check_command: cookbook lines, Dynamo workers) was judged without SGLang's
    triton_kernel / --ep-size assert (limits.TRITON_KERNEL_EP_RULE): the server it names does not start."""
    cfg = json.loads((Path(__file__).parent / "fixtures" / "predict_heldout_configs" /
                      "openai--gpt-oss-20b_config.json").read_text())
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "openai/gpt-oss-20b", "--tp-size", "2",
           "--moe-runner-backend", "triton_kernel"]
    v = check_command([*cmd, "--ep-size", "2"], engine="sglang", config=cfg)
    [f] = [f for f in v.findings if f.severity == "error"]
    assert f.code == "moe-runner-ep" and "SGLang asserts" in f.message and not v.ok, v.findings
    assert check_command(cmd, engine="sglang", config=cfg).ok


def test_an_sglang_recipe_plan_with_gpt_oss_triton_kernel_at_ep_above_1_fails_its_check() -> None:
    """A resolved SGLang plan (the recipes builder's verdict) is judged by SGLang's triton_kernel / --ep-size assert
    as a bare check judges its command (limits.TRITON_KERNEL_EP_RULE)."""
    cfg = json.loads((Path(__file__).parent / "fixtures" / "predict_heldout_configs" /
                      "openai--gpt-oss-20b_config.json").read_text())
    argv = ("python3", "-m", "sglang.launch_server", "--model-path", "openai/gpt-oss-20b", "--tp-size", "8",
            "--moe-runner-backend", "triton_kernel")

    def verdict(*flags: str) -> Verdict:
        plan = dataclasses.replace(_plan([], model_id="openai/gpt-oss-20b"), engine="sglang",
                                   commands=(Command(role="single", argv=(*argv, *flags), env={}),))
        return check_plan(plan, config=cfg)

    refused = verdict("--ep-size", "8")
    assert _one(refused, "moe-runner-ep").severity == "error" and not refused.ok
    assert "moe-runner-ep" not in _codes(verdict())
