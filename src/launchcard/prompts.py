"""The prompts and the tool that `launchcard verify` sends and the generated client calls show.

One definition for both (the live tests' tiny model was trained on it, so the
generated calls can be executed there).  Plain data, standard library only:
scripts/make_tiny_model.py loads this file by path (in the vLLM venv, where
launchcard is not installed) and trains the test model on exactly this tool.
"""

TOOL_PROMPT = "What is the weather in Paris right now?"
CHAT_PROMPT = "What is 2 + 2? Answer briefly."

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
