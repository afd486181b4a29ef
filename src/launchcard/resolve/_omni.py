"""The omni resolver: one ``vllm serve ... --omni`` command per task (spec §8)."""

from __future__ import annotations

from typing import Any

from launchcard.resolve._context import Ctx, as_dict, as_list
from launchcard.resolve._layers import Args, Env, flatten
from launchcard.resolve._render import docker_image, shell_command


def omni_tasks(ctx: Ctx) -> list[dict[str, Any]]:
    out = []
    for task in as_list(as_dict(ctx.data.get("omni")).get("tasks")):
        out.append({"id": task} if isinstance(task, str) else as_dict(task))
    return out


def find_task(ctx: Ctx, name: str | None) -> tuple[int, dict[str, Any]] | None:
    tasks = omni_tasks(ctx)
    if name is None:
        return (0, tasks[0]) if tasks else None
    for i, task in enumerate(tasks):
        if task.get("key") == name:
            return i, task
    for i, task in enumerate(tasks):
        if task.get("id") == name:
            return i, task
    return None


def build_omni(ctx: Ctx, task_name: str | None) -> tuple[dict[str, Any], Args, Env, str]:
    omni = as_dict(ctx.data.get("omni"))
    found = find_task(ctx, task_name)
    index, task = found if found else (0, {})
    tpath = ("omni", "tasks", index)
    thw = as_dict(as_dict(task.get("hardware_overrides")).get(ctx.hw))
    model_id = (thw.get("model_id") or task.get("model_id") or ctx.variant.get("model_id")
                or ctx.model.get("model_id") or "unknown")
    non_default = ctx.variant_key != "default"
    v, vp = ctx.variant, ctx.variant_path
    rec_hw = as_dict(ctx.data.get("hardware_overrides"))
    r_key = ctx.gen_key(rec_hw)
    var_hw = as_dict(v.get("hardware_overrides"))
    v_key = ctx.gen_key(var_hw)

    env = Env()

    def at(layer: str, key: str | None, *path: Any):
        return lambda k: ctx.src(layer, key, *path, k)

    env.update(ctx.model.get("base_env"), at("base", None, "model", "base_env"))
    if non_default:
        env.update(v.get("extra_env"), at("variant", ctx.variant_key, *vp, "extra_env"))
    if r_key:
        env.update(as_dict(rec_hw[r_key]).get("extra_env"), at("hardware_override", r_key, "hardware_overrides",
                                                                r_key, "extra_env"))
    if v_key:
        env.update(as_dict(var_hw[v_key]).get("extra_env"),
                   at("variant_hardware", v_key, *vp, "hardware_overrides", v_key, "extra_env"))
    env.update(as_dict(var_hw.get(ctx.hw)).get("extra_env"),
               at("variant_hardware", ctx.hw, *vp, "hardware_overrides", ctx.hw, "extra_env"))

    args = Args()
    args.add(ctx.model.get("base_args"), ctx.src("base", None, "model", "base_args"))
    if non_default:
        args.add(v.get("extra_args"), ctx.src("variant", ctx.variant_key, *vp, "extra_args"))
    args.add(task.get("extra_args"), ctx.src("omni_task", task.get("key") or task.get("id"), *tpath, "extra_args"))
    args.add(thw.get("extra_args"), ctx.src("omni_task", f"{task.get('id')}/{ctx.hw}", *tpath,
                                            "hardware_overrides", ctx.hw, "extra_args"))
    if r_key:
        args.add(as_dict(rec_hw[r_key]).get("extra_args"),
                 ctx.src("hardware_override", r_key, "hardware_overrides", r_key, "extra_args"))
    if v_key:
        args.add(as_dict(var_hw[v_key]).get("extra_args"),
                 ctx.src("variant_hardware", v_key, *vp, "hardware_overrides", v_key, "extra_args"))
    args.add(as_dict(var_hw.get(ctx.hw)).get("extra_args"),
             ctx.src("variant_hardware", ctx.hw, *vp, "hardware_overrides", ctx.hw, "extra_args"))
    if omni.get("port") is not None:
        args.add(["--port", str(omni["port"])], ctx.src("omni_task", "port", "omni", "port"))
    args.add(["--omni"], ctx.src("omni_task", None, "omni"))
    binary = omni.get("serve_binary") or "vllm serve"
    units = args.normalised()
    command = _command(binary, model_id, flatten(units))
    result = {"deploy_type": "omni", "docker_image": docker_image(ctx), "model_id": model_id,
              "env": env.values(), "command": command}
    return result, args, env, model_id


def _command(binary: str, model_id: str, tokens: list[Any]) -> str:
    rendered = shell_command(["_", "_", model_id, *tokens])
    return binary + rendered[3:]
