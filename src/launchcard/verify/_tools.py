"""The tool every tool-call check offers.

Plain data, standard library only: scripts/make_tiny_model.py loads this file
by path (in the vLLM venv, where launchcard is not installed) and trains the
test model on exactly this definition.
"""

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
