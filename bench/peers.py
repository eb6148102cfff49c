#!/usr/bin/env python3
"""corecoder beside the agents users pick instead, on one scripted 20-turn task (issue 32):

    bench/run.sh peers [--agents corecoder,pi,codex,claude,CoreCoder] [--reps N] [--json FILE]
                       [--line-forms] [--commands] [--keep]

`PEERS_CORECODER=BINARY` measures another corecoder build (a before/after). Results: BENCHMARKS.md,
"Beside the agents users pick".

A scripted model served here on 127.0.0.1 drives every agent through the same 19 steps (read,
grep, shell, a failing read, a no-match grep, `cd src && ls`, `exit 3`, `pwd`, four re-reads,
...; `STEPS`), then an answer, each step mapped onto the agent's OWN tools (`call_for`) and
spoken in its own wire dialect: chat completions (corecoder, pi, CoreCoder 0.8), the Responses
API (Codex CLI), Anthropic's Messages API (Claude Code). The model decides the next step from
the number of tool results the request carries, so a retry or an extra request never skips one.

Every agent runs in a network namespace that has only loopback, and a PID namespace of which
this script is process 1 (`unshare -rnp --fork --mount-proc`; the script re-executes itself
there, with the server inside): nothing can reach another host, every process an agent starts
is visible in /proc, and one left behind is reparented to us and reported. Python 3 standard
library only; tokens are counted by js-tiktoken's o200k_base (npm, under target/peers/; without
it, bytes / 4, said in a note).

Per agent, one row each: start-up (`--version`, median of 5), peak memory (the largest process's
VmHWM and the whole tree's summed VmRSS, sampled every 2 ms), CPU per session (user+sys of the
agent and everything it started), agent time per round ((wall - the server's busy time) /
requests), request bytes (bodies as sent) and tokens (o200k of the prompt as a provider's cache
sees it: tools, system, then messages, each as compact JSON; `render`), prefix reuse (the
share of each request's rendered prompt that repeats the previous request's prefix) and the
session's input priced at two providers' cached rates (the repeated prefix at the cache-hit
price). Requests that are not the task's conversation (no task text or no tools: titles, quota
probes, ...) and paths the server does not serve are listed as extra requests.
"""
import argparse, http.server, json, os, resource, shutil, signal, statistics, subprocess
import sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "target", "peers")  # npm packages, pinned (`NPM`)
VENV = os.path.join(ROOT, "target", "bench-venv")  # CoreCoder 0.8, shared with bench/run.sh
NPM = {"pi": "@mariozechner/pi-coding-agent@0.73.1", "codex": "@openai/codex@0.171.0",
       "claude": "@anthropic-ai/claude-code@2.1.332", "tokenizer": "js-tiktoken@1.0.21"}
COCO = "corecoder==0.8.0"
# US$ per million input tokens (cache miss, cache hit), as bench/prompt_cache.py prices them.
PRICES = {"DeepSeek": (0.30, 0.006), "OpenAI": (2.00, 0.10)}
TASK = "peer-bench task: look around this project and tell me what it is."
ANSWER = "It is a small calculator package with its tests."

# The project every agent works in, and the 19 steps before the answer.
FILES = {
    "README.md": "# calc\n\nA tiny calculator: `add`, `sub`, `mul`, `div` and a parser.\n"
                 + "".join(f"- step {i}: see src/calc.py\n" for i in range(1, 25)),
    "src/calc.py": "\"\"\"Arithmetic on two numbers.\"\"\"\n\n" + "".join(
        f"def op_{i}(a, b):\n    \"\"\"Operation {i}: a times {i} plus b.\"\"\"\n"
        f"    return a * {i} + b\n\n" for i in range(1, 31)),
    "src/util.py": "import re\n\n" + "".join(
        f"def parse_{i}(text):\n    match = re.match(r\"(\\d+)\\s*\\+\\s*(\\d+)\", text)\n"
        f"    return int(match.group(1)) + {i} if match else None\n\n" for i in range(1, 21)),
    "tests/test_calc.py": "import calc\n\n" + "".join(
        f"def test_op_{i}():\n    assert calc.op_{i}(1, 2) == {i + 2}\n\n" for i in range(1, 26)),
}
STEPS = [("read", "src/calc.py"), ("grep", "def op_1"), ("sh", "wc -l src/*.py README.md"),
         ("read", "src/util.py"), ("read", "src/missing.py"), ("grep", "no_such_symbol_xyz"),
         ("sh", "cd src && ls"), ("sh", "exit 3"), ("sh", "pwd"), ("read", "tests/test_calc.py"),
         ("grep", "import"), ("read", "README.md"), ("read", "src/calc.py"),
         ("sh", "echo checked"), ("read", "src/util.py"), ("grep", "return a"),
         ("read", "tests/test_calc.py"), ("sh", "uname -s"), ("read", "src/calc.py")]


def call_for(agent, step, project, offered):
    """Step `step` as a call of one of `agent`'s own tools: (name, arguments). Reads use the
    absolute path, since after `cd src` a relative one means another file to some agents."""
    kind, what = step
    path = os.path.join(project, what)
    grep_sh = f"grep -rn '{what}' {project}"
    if agent in ("corecoder", "CoreCoder"):
        return {"read": ("read_file", {"file_path": path}), "sh": ("bash", {"command": what}),
                "grep": ("grep", {"pattern": what, "path": project})}[kind]
    if agent == "claude":
        return {"read": ("Read", {"file_path": path}),
                "sh": ("Bash", {"command": what, "description": "run " + what}),
                "grep": ("Grep", {"pattern": what, "path": project, "output_mode": "content",
                                  "-n": True})}[kind]
    command = {"read": f"cat {path}", "sh": what, "grep": grep_sh}[kind]
    if agent == "pi":  # read, bash, edit, write: no grep tool
        return ("read", {"path": path}) if kind == "read" else ("bash", {"command": command})
    for name, args in (("shell_command", {"command": command}), ("exec_command", {"cmd": command}),
                       ("shell", {"command": ["bash", "-lc", command]})):
        if name in offered:  # Codex: whichever shell tool this version offers
            return name, args
    return "shell", {"command": ["bash", "-lc", command]}


# ---- the scripted model, in three dialects ----

def tools_offered(body):
    return [t.get("name") or t.get("function", {}).get("name") or t.get("type")
            for t in body.get("tools") or []]


def results_in(dialect, body):
    """How many tool results the request carries: the number of the step to answer with."""
    if dialect == "chat":
        return sum(m.get("role") == "tool" for m in body.get("messages", []))
    if dialect == "anthropic":
        return sum(isinstance(m.get("content"), list) and sum(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
            for m in body.get("messages", []))
    return sum(isinstance(i, dict) and str(i.get("type", "")).endswith("_output")
               for i in body.get("input", []) if isinstance(i, dict))


def render(dialect, body):
    """The prompt as a provider's cache sees it: tools, system, messages, compact sorted JSON,
    less Anthropic's `cache_control` markers (they say where to cache; they are not prompt).
    An Anthropic content string is written as the one text block it stands for, so a message
    sent first as blocks and then as a string (Claude Code does) reads the same."""
    body = json.loads(json.dumps(body), object_hook=lambda o: {
        k: v for k, v in o.items() if k != "cache_control"})
    parts = list(body.get("tools") or [])
    if dialect == "anthropic":
        messages = [{**m, "content": [{"type": "text", "text": m["content"]}]}
                    if isinstance(m.get("content"), str) else m for m in body.get("messages", [])]
        parts += [body.get("system")] + messages
    elif dialect == "responses":
        parts += [body.get("instructions")] + list(body.get("input", []))
    else:
        parts += list(body.get("messages", []))
    return "".join(json.dumps(p, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                   + "\n" for p in parts if p is not None)


def sse_events(events):
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def reply(dialect, n, call):
    """The SSE body answering request with step `n`: `call` (name, args) or, if None, ANSWER."""
    cid, used = f"call_{n}", 10
    if dialect == "chat":
        delta = ({"role": "assistant", "content": ANSWER} if call is None else
                 {"role": "assistant", "tool_calls": [{"index": 0, "id": cid, "type": "function",
                  "function": {"name": call[0], "arguments": json.dumps(call[1])}}]})
        chunk = lambda body: "data: " + json.dumps(body) + "\n\n"
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "model": "bench-model"}
        return (chunk({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                + chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason":
                                             "stop" if call is None else "tool_calls"}]})
                + chunk({**base, "choices": [], "usage": {"prompt_tokens": 100,
                         "completion_tokens": used, "total_tokens": 100 + used}})
                + "data: [DONE]\n\n")
    if dialect == "anthropic":
        block = ({"type": "text", "text": ""} if call is None else
                 {"type": "tool_use", "id": f"toolu_{n}", "name": call[0], "input": {}})
        delta = ({"type": "text_delta", "text": ANSWER} if call is None else
                 {"type": "input_json_delta", "partial_json": json.dumps(call[1])})
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "bench-model",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 100, "output_tokens": 1}}
        return sse_events([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn" if
                               call is None else "tool_use", "stop_sequence": None},
                               "usage": {"output_tokens": used}}),
            ("message_stop", {"type": "message_stop"})])
    item = ({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}
            if call is None else
            {"type": "function_call", "id": f"fc_{n}", "call_id": cid, "name": call[0],
             "arguments": json.dumps(call[1]), "status": "completed"})
    response = {"id": f"resp_{n}", "object": "response", "model": "bench-model",
                "status": "in_progress", "output": []}
    done = {**response, "status": "completed", "output": [item], "usage": {
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": used, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 100 + used}}
    return sse_events([
        ("response.created", {"type": "response.created", "response": response}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": {**item, "status": "in_progress"}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed", "response": done})])


class Model(http.server.ThreadingHTTPServer):
    """Serves one agent's session and records every request: (path, body bytes, dialect,
    conversation?, step answered, seconds spent serving it)."""

    def __init__(self, agent, project):
        super().__init__(("127.0.0.1", 0), Handler)
        self.agent, self.project, self.lock, self.requests = agent, project, threading.Lock(), []
        self.busy = 0.0  # seconds spent serving, taken out of the agent's time

    def answer(self, path, raw):
        dialect = ("anthropic" if path.endswith("/messages") else
                   "responses" if path.endswith("/responses") else
                   "chat" if path.endswith("/chat/completions") else None)
        record = {"path": path, "bytes": len(raw), "dialect": dialect, "conversation": False}
        if dialect is None:
            with self.lock:
                self.requests.append(record)
            return 404, "application/json", json.dumps({"error": "not served"})
        body = json.loads(raw or b"{}")
        record["conversation"] = bool(body.get("tools")) and TASK in json.dumps(body)
        n = results_in(dialect, body) if record["conversation"] else len(STEPS)
        call = (call_for(self.agent, STEPS[n], self.project, tools_offered(body))
                if n < len(STEPS) else None)
        record.update(step=n, prompt=render(dialect, body), tools=tools_offered(body))
        with self.lock:
            self.requests.append(record)
        if body.get("stream") is False and dialect == "anthropic":
            message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model":
                       "bench-model", "content": [{"type": "text", "text": ANSWER}],
                       "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 100, "output_tokens": 10}}
            return 200, "application/json", json.dumps(message)
        return 200, "text/event-stream", reply(dialect, n, call)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def serve(self):
        started = time.perf_counter()
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        status, kind, text = self.server.answer(self.path.split("?")[0], raw)
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with self.server.lock:
            self.server.busy += time.perf_counter() - started

    do_POST = do_GET = do_HEAD = serve

    def log_message(self, *args):
        pass


# ---- installing and starting each agent ----

def npm_bin(name, script):
    """target/peers/node_modules/.bin/SCRIPT, installing the pinned package if it is missing."""
    path = os.path.join(PEERS, "node_modules", ".bin", script)
    if not os.path.exists(path):
        os.makedirs(PEERS, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", PEERS, NPM[name]],
                       stdout=subprocess.DEVNULL, check=True)
    return path


def install(agent):
    """The agent's executable (installed on first use), or raise with why it cannot run."""
    if agent == "corecoder":
        path = os.environ.get("PEERS_CORECODER") or os.path.join(ROOT, "target", "dist", "corecoder")
        if not os.path.exists(path):
            raise RuntimeError("no target/dist/corecoder: cargo build --profile dist")
        return path
    if agent == "CoreCoder":
        path = os.path.join(VENV, "bin", "corecoder")
        if not os.path.exists(path):
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
            subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", COCO], check=True)
        return path
    return npm_bin(agent, {"pi": "pi", "codex": "codex", "claude": "claude"}[agent])


def version(agent, program):
    """The installed version, as the program prints it."""
    done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=60)
    text = (done.stdout + done.stderr).strip().splitlines()[-1] if done.returncode == 0 else "?"
    return text.split()[-1] if agent in ("corecoder", "CoreCoder") else text


def command(agent, program, port, home):
    """(argv, extra environment) for one session; config files go under `home`."""
    base = f"http://127.0.0.1:{port}"
    if agent == "corecoder":
        return [program, "-p", TASK, "--yes"], {"CORECODER_BASE_URL": base + "/v1",
                "CORECODER_API_KEY": "sk-test", "CORECODER_MODEL": "bench-model"}
    if agent == "CoreCoder":
        return [program, "-p", TASK, "--yes"], {"OPENAI_BASE_URL": base + "/v1",
                "OPENAI_API_KEY": "sk-test", "CORECODER_MODEL": "bench-model"}
    if agent == "pi":  # docs/models.md of the package: a custom OpenAI-compatible provider
        config = os.path.join(home, ".pi", "agent")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "models.json"), "w") as f:
            json.dump({"providers": {"bench": {"baseUrl": base + "/v1", "api": "openai-completions",
                       "apiKey": "sk-test", "models": [{"id": "bench-model"}]}}}, f)
        with open(os.path.join(config, "settings.json"), "w") as f:
            json.dump({"enableInstallTelemetry": False}, f)
        return [program, "-p", "--no-session", "--provider", "bench", "--model", "bench-model",
                TASK], {"PI_OFFLINE": "1", "PI_TELEMETRY": "0", "PI_SKIP_VERSION_CHECK": "1"}
    if agent == "codex":  # a custom provider speaking the Responses API, in a temp CODEX_HOME
        config = os.path.join(home, ".codex")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "config.toml"), "w") as f:
            f.write('model = "bench-model"\nmodel_provider = "bench"\n'
                    'check_for_update_on_startup = false\n[analytics]\nenabled = false\n'
                    '[otel]\nexporter = "none"\n[model_providers.bench]\nname = "bench"\n'
                    f'base_url = "{base}/v1"\nenv_key = "BENCH_API_KEY"\nwire_api = "responses"\n')
        return [program, "exec", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", TASK], {
                "CODEX_HOME": config, "BENCH_API_KEY": "sk-test"}
    return [program, "-p", TASK, "--model", "bench-model", "--allowedTools", "Bash,Read,Grep"], {
        "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": "sk-test", "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


# ---- one session, measured ----

NAME = [""]  # this process's name in /proc, set in main

def processes():
    """{pid: (name, VmRSS bytes, VmHWM bytes)} of every process in our PID namespace but us."""
    found, ours = {}, NAME[0]
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == "1":
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        kib = lambda key: int(fields.get(key, "0 kB").split()[0]) * 1024
        if fields["Name"].strip() != ours:  # not a fork of ours that has not exec'd yet
            found[int(pid)] = (fields["Name"].strip(), kib("VmRSS"), kib("VmHWM"))
    return found


def command_line(pid):
    """The first words of a process's command line, paths shortened to their last part."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().decode(errors="replace").split("\0")[:4]
    except OSError:
        return None
    return " ".join(os.path.basename(w) if w.startswith("/") else w for w in words).strip()


def sample(stop, seen):
    """Every 2 ms: each process's high-water mark and the tree's summed resident size."""
    while True:
        now = processes()
        seen["tree"] = max(seen["tree"], sum(rss for _, rss, _ in now.values()))
        for pid, (name, _, hwm) in now.items():
            seen["largest"] = max(seen["largest"], hwm)
            if pid not in seen["names"]:  # what it ran, read once per process
                seen["commands"].add(command_line(pid) or name)
            seen["names"][pid] = name
        if stop.is_set():
            return
        time.sleep(0.002)


def startup(program):
    """Median wall time of 5 `--version` runs after one warm-up, in ms."""
    times = []
    for _ in range(6):
        started = time.perf_counter()
        subprocess.run([program, "--version"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times[1:])


def session(agent, program):
    """One session of the task: what it cost, what it sent, what it left behind."""
    work = os.path.join(tempfile.gettempdir(), "corecoder-peers", agent)  # the same each run,
    shutil.rmtree(work, ignore_errors=True)  # so a path tokenizes the same way every time
    project, home = os.path.join(work, "project"), os.path.join(work, "home")
    for path, text in FILES.items():
        os.makedirs(os.path.dirname(os.path.join(project, path)), exist_ok=True)
        with open(os.path.join(project, path), "w") as f:
            f.write(text)
    os.makedirs(home)
    model = Model(agent, project)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    argv, extra = command(agent, program, model.server_port, home)
    env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8", "TERM": "dumb", **extra}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seen, stop = {"tree": 0, "largest": 0, "names": {}, "commands": set()}, threading.Event()
    out = open(os.path.join(work, "output"), "w+")
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT)
    sampler = threading.Thread(target=sample, args=(stop, seen), daemon=True)
    sampler.start()
    killer = threading.Timer(300, lambda: os.kill(child.pid, signal.SIGKILL))
    killer.start()
    _, status, _ = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    time.sleep(0.3)  # a child still exiting on its own is not "left behind"
    stop.set()
    sampler.join()
    left = {pid: name for pid, (name, _, _) in processes().items()}
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:  # we are process 1 here: reap what was reparented to us
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    model.shutdown()
    model.server_close()
    with open(os.path.join(work, "requests.jsonl"), "w") as f:  # kept with --keep
        f.writelines(json.dumps(r) + "\n" for r in model.requests)
    out.seek(0)
    talk = [r for r in model.requests if r["conversation"]]
    return {"exit": child.returncode, "wall": wall, "busy": model.busy, "talk": talk,
            "extra": [r["path"] for r in model.requests if not r["conversation"]],
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "tree": seen["tree"], "largest": seen["largest"],
            "spawned": sorted(set(seen["names"].values())), "left": sorted(left.values()),
            "commands": sorted(c[:80] for c in seen["commands"]),
            "output": out.read()[-600:], "work": work}


# ---- the figures ----

TOKENIZER = """const {Tiktoken} = require("js-tiktoken/lite");
const e = new Tiktoken(require("js-tiktoken/ranks/o200k_base"));
let s = ""; process.stdin.on("data", d => s += d).on("end", () =>
  console.log(JSON.stringify(JSON.parse(s).map(t => e.encode(t).length))));"""


def tokens(texts):
    """o200k_base token counts of `texts` (js-tiktoken), or None when it cannot run."""
    try:
        npm_bin("tokenizer", "")
        done = subprocess.run(["node", "-e", TOKENIZER], cwd=PEERS, input=json.dumps(texts),
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as why:
        print(f"note: no o200k tokenizer ({why}); tokens are bytes / 4", file=sys.stderr)
        return None


def figures(run):
    """The session's request figures: bytes, tokens, prefix reuse, breaks and dollars."""
    prompts = [r["prompt"] for r in run["talk"]]
    shared = [0] + [len(os.path.commonprefix([a, b])) for a, b in zip(prompts, prompts[1:])]
    breaks = sum(s < len(a) for s, a in zip(shared[1:], prompts))
    counted = tokens(prompts + [p[:s] for p, s in zip(prompts, shared)])
    if counted is None:
        counted = [len(t.encode()) // 4 for t in prompts + [p[:s] for p, s in zip(prompts, shared)]]
    whole, cached = counted[:len(prompts)], counted[len(prompts):]
    later = sum(len(p) for p in prompts[1:]) or 1
    dollars = {name: sum((w - c) * miss + c * hit for w, c in zip(whole, cached)) / 1e6
               for name, (miss, hit) in PRICES.items()}
    return {"requests": len(prompts), "bytes": sum(r["bytes"] for r in run["talk"]),
            "tokens": sum(whole), "first": whole[0] if whole else 0,
            "first_bytes": run["talk"][0]["bytes"] if prompts else 0,
            "reuse": sum(shared[1:]) / later, "breaks": breaks, "dollars": dollars,
            "tools": run["talk"][0]["tools"] if prompts else []}


# Line-number forms of read_file's lines, measured on corecoder's session (`--line-forms`).
FORMS = {"N:text (now)": r"\1\2:", "N<TAB>text": r"\1\2\\t", "N|text": r"\1\2|",
         "N text": r"\1\2 ", "right-aligned 6 + TAB (cat -n)": None, "no numbers": r"\1"}


def line_forms(run):
    """The session's tokens with read_file's `N:` prefixes rewritten in each form of `FORMS`:
    only the read results change (in this task no other result has a line starting with a
    number and a colon)."""
    import re
    prompts = [r["prompt"] for r in run["talk"]]
    numbered = re.compile(r'(\\n|"content":")(\d+):')
    out = {}
    for name, form in FORMS.items():
        if form is None:
            rewrite = lambda m: m.group(1) + m.group(2).rjust(6) + "\\t"
        else:
            rewrite = lambda m, form=form: m.expand(form)
        counted = tokens([numbered.sub(rewrite, p) for p in prompts])
        out[name] = sum(counted) if counted else None
    return out


def check(run):
    """Why the session does not count (every step served, then the answer), or None."""
    steps = [r["step"] for r in run["talk"]]
    if run["exit"] != 0:
        return f"exited {run['exit']}: {run['output'][-300:]!r}"
    if not set(range(len(STEPS) + 1)) <= set(steps):
        return f"served steps {sorted(set(steps))}, not 0..{len(STEPS)}"
    return None


def table(rows, agents):
    """Markdown: one column per agent, each figure with its ratio to corecoder's."""
    base = rows.get("corecoder")
    def cell(agent, key, fmt, lower_is_better=True):
        value = rows[agent][key]
        text = fmt(value)
        if base and agent != "corecoder" and base[key]:
            text += f" ({value / base[key]:.2f}×)"
        return text
    lines = [("start-up (`--version`, median of 5)", "startup", lambda v: f"{v:.1f} ms"),
             ("peak memory, largest process", "largest", lambda v: f"{v / 2**20:.1f} MiB"),
             ("peak memory, whole tree", "tree", lambda v: f"{v / 2**20:.1f} MiB"),
             ("CPU per session (user+sys, all processes)", "cpu", lambda v: f"{v * 1000:.0f} ms"),
             ("agent time per round ((wall - server) / requests)", "per_round",
              lambda v: f"{v * 1000:.1f} ms"),
             ("requests of the task", "requests", str),
             ("request bytes, the session", "bytes", lambda v: f"{v:,}"),
             ("tokens (o200k), the session", "tokens", lambda v: f"{v:,}"),
             ("tokens of the first request (system + tools + task)", "first", lambda v: f"{v:,}"),
             ("prefix reuse (share repeating the previous request)", "reuse",
              lambda v: f"{v * 100:.1f} %"),
             ("cache breaks", "breaks", str)]
    for name in PRICES:
        lines.append((f"input $ at {name}'s cached prices, the session", "$" + name,
                      lambda v: f"${v:.4f}"))
    out = ["| metric | " + " | ".join(rows[a]["label"] for a in agents) + " |",
           "|---|" + "---|" * len(agents)]
    for label, key, fmt in lines:
        out.append(f"| {label} | " + " | ".join(cell(a, key, fmt) for a in agents) + " |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", default="corecoder,pi,codex,claude,CoreCoder")
    parser.add_argument("--reps", type=int, default=1, help="sessions per agent, interleaved")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--keep", action="store_true", help="keep the sessions' temp folders")
    parser.add_argument("--commands", action="store_true",
                        help="also list the command lines each agent's processes ran")
    parser.add_argument("--line-forms", action="store_true",
                        help="also corecoder's session tokens with each line-number form")
    args = parser.parse_args()
    wanted = args.agents.split(",")
    if os.getpid() != 1:  # install (network), then run everything in the namespaces
        for agent in wanted:
            try:
                install(agent)
            except Exception as why:  # any failure to install is a skip, said why
                print(f"note: could not install {agent}: {why}", file=sys.stderr)
        if not shutil.which("unshare"):
            sys.exit("peers.py needs unshare(1) (util-linux) for the loopback-only namespace")
        os.execvp("unshare", ["unshare", "-rnp", "--fork", "--mount-proc", sys.executable,
                              os.path.abspath(__file__), *sys.argv[1:]])
    subprocess.run(["ip", "link", "set", "lo", "up"], stderr=subprocess.DEVNULL)
    with open("/proc/1/status") as f:
        NAME[0] = f.readline().split(":", 1)[1].strip()
    programs, rows, runs = {}, {}, {a: [] for a in wanted}
    for agent in wanted:
        try:
            programs[agent] = install(agent)
        except Exception as why:
            print(f"note: {agent} skipped: {why}", file=sys.stderr)
    for rep in range(args.reps):  # interleaved: each round of sessions runs every agent once
        for agent in programs:
            run = session(agent, programs[agent])
            why = check(run)
            print(f"{agent} session {rep + 1}: {why or 'every step served'}", file=sys.stderr)
            runs[agent].append((run, why))
            if not args.keep:
                shutil.rmtree(run["work"], ignore_errors=True)
    for agent, program in programs.items():
        good = [r for r, why in runs[agent] if why is None]
        if not good:
            print(f"note: {agent} skipped: no session completed the task", file=sys.stderr)
            continue
        median = lambda key: statistics.median(r[key] for r in good)
        row = figures(good[0])  # the requests are the same every session
        row.update({"$" + k: v for k, v in row.pop("dollars").items()})
        row.update(label=f"{agent} {version(agent, program)}", startup=startup(program),
                   largest=median("largest"), tree=median("tree"), cpu=median("cpu"),
                   per_round=statistics.median((r["wall"] - r["busy"]) / len(r["talk"])
                                               for r in good),
                   extra=good[0]["extra"], spawned=good[0]["spawned"],
                   commands=sorted({c for r in good for c in r["commands"]}),
                   left=sorted({n for r in good for n in r["left"]}), sessions=len(good))
        rows[agent] = row
        if agent == "corecoder" and args.line_forms:
            row["line_forms"] = line_forms(good[0])
    shown = [a for a in programs if a in rows]
    print(table(rows, shown))
    print()
    for agent in shown:
        row = rows[agent]
        print(f"- {row['label']}: {row['sessions']} session(s); tools offered: "
              f"{', '.join(map(str, row['tools']))}; processes: {', '.join(row['spawned'])}; "
              f"extra requests: {row['extra'] or 'none'}; left behind: {row['left'] or 'none'}")
        if args.commands:
            print(f"  - commands it ran: {'; '.join(row['commands'])}")
    for name, count in rows.get("corecoder", {}).get("line_forms", {}).items():
        print(f"- corecoder's session with read_file lines as {name}: {count:,} tokens")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
