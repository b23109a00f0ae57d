"""The official SDK's 1.x client (``mcp==1.30.0``, in ``.venv-mcp1``) driving webtools' MCP server.

Run by ``tests/test_mcp_clients.py`` as ``.venv-mcp1/bin/python tests/mcp1/client.py '<plan as JSON>'``:
the 1.x and 2.x lines share the package name, so the 1.x client cannot run in the main environment.
The plan names the transport (``"stdio"`` with ``command``, ``env`` and ``cwd``, or ``"http"`` with
``url`` and ``token``), how the client's user answers a question (``"accept"``, ``"decline"``, or null
for a client that declares no elicitation) and the ``steps`` (``["list"]``, ``["call", name, args]``).
Prints one JSON object: the negotiated protocol version, each step's result as the client parsed it
(by alias: the wire's names) and the questions its user was asked.
"""
import json
import sys

import anyio
import httpx
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def answerer(how, asked):
    if how is None:
        return None

    async def answer(context, params):
        asked.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        if how == "accept":
            return types.ElicitResult(action="accept", content={"fetch": True})
        return types.ElicitResult(action="decline")

    return answer


async def run(plan, session, asked):
    init = await session.initialize()
    results = []
    for step in plan["steps"]:
        if step[0] == "list":
            result = await session.list_tools()
        else:
            result = await session.call_tool(step[1], step[2])
        results.append(result.model_dump(by_alias=True, mode="json", exclude_none=True))
    return {"protocol": init.protocolVersion, "steps": results, "asked": asked}


async def main(plan):
    asked = []
    callback = answerer(plan.get("elicitation"), asked)
    if plan["transport"] == "stdio":
        params = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan["env"],
                                       cwd=plan["cwd"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                return await run(plan, session, asked)
    headers = {"Authorization": f"Bearer {plan['token']}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(plan["url"], http_client=http) as (read, write, _session_id):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                return await run(plan, session, asked)


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, json.loads(sys.argv[1]))))
