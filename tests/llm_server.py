"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, standing in for the model.

The script is a list of steps; the step answered is the number of assistant messages the request
holds after its last user message, so each conversation plays the script from the start, statelessly::

    script = [ask(("web_search", {"query": "django"})), ask(("web_fetch", {"url": page})), answer("Done.")]
    with ScriptedLLM(script) as llm:
        OpenAI(base_url=llm.url, api_key="test") ...
        llm.requests   # every request body received, to check what the model saw

``ScriptedAnthropic`` plays the same script as Anthropic's Messages API, for the ``anthropic`` SDK.

``stream: true`` is answered with server-sent events the way OpenAI sends them: text in pieces, each
tool call's id and name first and its JSON arguments in fragments, then ``data: [DONE]``.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Arguments = dict | Callable[[list[dict]], dict]


def ask(*calls: tuple[str, Arguments]) -> dict:
    """A step that asks for tool calls: ``(name, arguments)`` pairs; arguments may be a function of the
    request's messages (to act on what a tool returned)."""
    return {"tool_calls": list(calls)}


def answer(text: str) -> dict:
    """A step that answers with ``text``."""
    return {"content": text}


class ScriptedLLM:
    #: The path (its end) the model answers on.
    ENDPOINT = "/chat/completions"

    def __init__(self, script: list[dict], model: str = "scripted-model") -> None:
        self.script = script
        self.model = model
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    # -- lifetime ------------------------------------------------------------------------------

    def __enter__(self) -> ScriptedLLM:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": llm.model, "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.rstrip("/").endswith(llm.ENDPOINT):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                llm.requests.append(body)
                llm.headers.append(dict(self.headers))
                step = llm.step_for(body.get("messages") or [])
                if body.get("stream"):
                    self._stream(step)
                else:
                    self._json(200, llm.completion(step))

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, step: dict) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in llm.chunks(step):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        """The base URL to give a client (``.../v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- the script ----------------------------------------------------------------------------

    def step_for(self, messages: list[dict]) -> dict:
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        index = sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant")
        step = self.script[min(index, len(self.script) - 1)]
        if "tool_calls" not in step:
            return step
        calls = []
        for number, (name, arguments) in enumerate(step["tool_calls"]):
            if callable(arguments):
                arguments = arguments(messages)
            calls.append({"id": f"call_{index}_{number}", "type": "function",
                          "function": {"name": name, "arguments": json.dumps(arguments)}})
        return {"tool_calls": calls}

    def completion(self, step: dict) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
        if "tool_calls" in step:
            message["tool_calls"] = step["tool_calls"]
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if "tool_calls" in step else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def chunks(self, step: dict):
        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": self.model,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        if "tool_calls" in step:
            for index, call in enumerate(step["tool_calls"]):
                opening = {"index": index, "id": call["id"], "type": "function",
                           "function": {"name": call["function"]["name"], "arguments": ""}}
                yield chunk({"tool_calls": [opening]})
                arguments = call["function"]["arguments"]
                half = len(arguments) // 2
                for piece in (arguments[:half], arguments[half:]):
                    yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            yield chunk({}, "tool_calls")
            return
        text = step.get("content") or ""
        words = text.split(" ")
        for number, word in enumerate(words):
            yield chunk({"content": word + (" " if number < len(words) - 1 else "")})
        yield chunk({}, "stop")


def tool_messages(request: dict) -> list[dict]:
    """The ``tool`` messages of a recorded request."""
    return [m for m in request.get("messages") or [] if m.get("role") == "tool"]


class ScriptedAnthropic(ScriptedLLM):
    """The same script served as Anthropic's Messages API (``POST /v1/messages``, no streaming), for the
    ``anthropic`` SDK: ``anthropic.Anthropic(base_url=llm.url, api_key="test")``.

    The step answered is the number of assistant messages after the last user message that is not only
    ``tool_result`` blocks (the Messages API sends tool results as user messages)."""

    ENDPOINT = "/v1/messages"

    @property
    def url(self) -> str:
        """The base URL to give the SDK (it adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def step_for(self, messages: list[dict]) -> dict:
        def asked(message: dict) -> bool:
            content = message.get("content")
            return message.get("role") == "user" and (
                isinstance(content, str) or any(block.get("type") != "tool_result" for block in content))

        last_user = max((i for i, m in enumerate(messages) if asked(m)), default=-1)
        index = sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant")
        step = self.script[min(index, len(self.script) - 1)]
        if "tool_calls" not in step:
            return step
        uses = []
        for number, (name, arguments) in enumerate(step["tool_calls"]):
            if callable(arguments):
                arguments = arguments(messages)
            uses.append({"type": "tool_use", "id": f"toolu_{index}_{number}", "name": name, "input": arguments})
        return {"tool_calls": uses}

    def completion(self, step: dict) -> dict:
        content = step["tool_calls"] if "tool_calls" in step else [{"type": "text", "text": step.get("content")}]
        return {
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": "tool_use" if "tool_calls" in step else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        }


def tool_results(request: dict) -> list[dict]:
    """The ``tool_result`` blocks of a recorded Messages API request."""
    return [block for m in request.get("messages") or [] if m.get("role") == "user"
            and isinstance(m.get("content"), list) for block in m["content"] if block.get("type") == "tool_result"]
