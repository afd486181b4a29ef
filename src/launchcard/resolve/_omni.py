"""The omni resolver: one ``vllm serve ... --omni`` command per task (spec §8)."""

from __future__ import annotations

from typing import Any

from launchcard.resolve._context import Ctx, Derivation, Given, Src
from launchcard.resolve._layers import Args, Env, flatten
from launchcard.resolve._render import docker_image, shell_command
from launchcard.sources import Omni, OmniTask, first_truthy

_NO_OMNI = Omni()
_NO_TASK = OmniTask()


def omni_tasks(ctx: Ctx) -> tuple[OmniTask, ...]:
    return (ctx.recipe.omni or _NO_OMNI).tasks


def find_task(ctx: Ctx, name: str | None) -> tuple[int, OmniTask] | None:
    tasks = omni_tasks(ctx)
    if name is None:
        return (0, tasks[0]) if tasks else None
    for i, task in enumerate(tasks):
        if task.key == name:
            return i, task
    for i, task in enumerate(tasks):
        if task.id == name:
            return i, task
    return None


def build_omni(ctx: Ctx, task_name: str | None) -> tuple[dict[str, Any], Args, Env, str]:
    omni = ctx.recipe.omni or _NO_OMNI
    found = find_task(ctx, task_name)
    index, task = found if found else (0, _NO_TASK)
    tpath = ("omni", "tasks", index)
    hw = ctx.hw
    thw = task.hardware_overrides.get(hw)
    model_id: str = first_truthy(thw.model_id if thw else None, task.model_id, ctx.variant.model_id,
                                 ctx.recipe.model.model_id, "unknown")
    non_default = ctx.variant_key != "default"
    v, vp = ctx.variant, ctx.variant_path
    rec_hw = ctx.recipe.hardware_overrides
    r_key = ctx.gen_key(rec_hw)
    var_hw = v.hardware_overrides
    v_key = ctx.gen_key(var_hw)
    exact = var_hw.get(hw)

    env = Env()
    env.update(ctx.recipe.model.base_env, ctx.src("base", None, "model", "base_env"))
    if non_default:
        env.update(v.extra_env, ctx.src("variant", ctx.variant_key, *vp, "extra_env"))
    if r_key:
        env.update(rec_hw[r_key].extra_env, ctx.src("hardware_override", r_key, "hardware_overrides", r_key,
                                                    "extra_env"))
    if v_key:
        env.update(var_hw[v_key].extra_env, ctx.src("variant_hardware", v_key, *vp, "hardware_overrides", v_key,
                                                    "extra_env"))
    if exact is not None:
        env.update(exact.extra_env, ctx.src("variant_hardware", hw, *vp, "hardware_overrides", hw, "extra_env"))

    args = Args()
    args.add(ctx.recipe.model.base_args, ctx.src("base", None, "model", "base_args"))
    if non_default:
        args.add(v.extra_args, ctx.src("variant", ctx.variant_key, *vp, "extra_args"))
    args.add(task.extra_args, ctx.src("omni_task", task.key or task.id, *tpath, "extra_args"))
    if thw is not None:
        args.add(thw.extra_args, ctx.src("omni_task", f"{task.id}/{hw}", *tpath, "hardware_overrides", hw,
                                         "extra_args"))
    if r_key:
        args.add(rec_hw[r_key].extra_args,
                 ctx.src("hardware_override", r_key, "hardware_overrides", r_key, "extra_args"))
    if v_key:
        args.add(var_hw[v_key].extra_args,
                 ctx.src("variant_hardware", v_key, *vp, "hardware_overrides", v_key, "extra_args"))
    if exact is not None:
        args.add(exact.extra_args, ctx.src("variant_hardware", hw, *vp, "hardware_overrides", hw, "extra_args"))
    if omni.port is not None:
        args.add(["--port", str(omni.port)], ctx.src("omni_task", "port", "omni", "port"))
    # not written in the recipe: the builder adds it to every omni task's command
    served = Given(f"omni.tasks[{index}].id", task.id, ctx.doc, (*tpath, "id"))
    args.add_raw(["--omni"], Src("omni_task", task.key or task.id, None, (),
                                 Derivation("the builder starts every omni task with --omni", (served,))))
    binary = omni.serve_binary or "vllm serve"
    units = args.normalised()
    command = _command(binary, model_id, flatten(units))
    result = {"deploy_type": "omni", "docker_image": docker_image(ctx), "model_id": model_id,
              "env": env.values(), "command": command}
    return result, args, env, model_id


def _command(binary: str, model_id: str, tokens: list[Any]) -> str:
    rendered = shell_command(["_", "_", model_id, *tokens])
    return binary + rendered[3:]
