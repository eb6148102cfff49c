#!/usr/bin/env python3
"""What a provider's prompt cache can reuse of an agent's requests, what a session costs with
that cache, and what one round costs as the history grows (issue 19). Prints a markdown table:

    python3 bench/prompt_cache.py --corecoder target/dist/corecoder \\
        [--peer target/bench-venv/bin/corecoder] [--rows prefix,long,size,floor] \\
        [--usage deepseek]

Each program runs in a fresh sandbox against a scripted OpenAI-compatible model served here on
127.0.0.1 (no other network), which records every request. The rows (`--rows`, default all):

prefix  "prefix reuse" and "dollars per session": 50 rounds in the interactive session, driven
        through stdin, because both programs toggle plan mode only with the `/plan` command (no
        flag; the model cannot). Every round reads a file, except every 5th (`todo_write`) and
        every 7th (bash `cd` into a subdirectory; round 35 is a `cd`). Three user turns end after
        rounds 21, 27 and 50; `/plan` is typed after the first and the second, so rounds 22-27
        run in plan mode. For each request: the share of its bytes that the next request repeats
        as its prefix (`render`), and the breaks (a request that changes an earlier byte). The
        same run simulates a provider cache and reports usage the provider's way (`--usage
        openai|deepseek`); the session is priced from it (`PRICES`, `dollars`) beside its floor.
long    "cache breaks in a long session": 200 `-p` rounds, each reading an 8 KB file (every 50th
        58 KB), in a 40k window (CORECODER_MAX_CONTEXT), so all three compaction tiers (50, 70
        and 90 %) are crossed; the compactions are counted from corecoder's notices on stderr.
size    "cost per round vs history size": the history is grown to about 10k, 100k and 1M tokens
        with big reads, then 20 small rounds follow; CPU per round = the process's user+sys of
        (grow + 20 rounds) minus that of (grow) alone, over 20; median of 3. Peak RSS is the
        process's own VmHWM, sampled every millisecond once exec'd. The peer: 10k and 100k.
floor   "loopback floor": what the size row's 1M-token body (4.34 MB) costs the sender's CPU
        to send over loopback with nothing else: Python writing bytes to a reader process, in
        one write and in 128 KiB writes (the size of ureq's writes). On loopback the kernel
        does the receiving side's TCP work in the sender's time too, so this is part of every
        program's CPU per round at that size.
"""
import argparse, http.server, json, math, os, resource, socket, statistics, subprocess, sys
import tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN_BYTES = 4  # a token is about 4 bytes of English or code; no tokenizer is needed here
# US$ per million input tokens: (cache miss, cache hit). Only input is priced: both programs
# get the same scripted replies, so their output tokens are the same.
PRICES = {
    "DeepSeek deepseek-flash, peak": (0.30, 0.006),  # api-docs.deepseek.com/quick_start/pricing
    "OpenAI gpt-6.2-sol": (2.00, 0.10),  # developers.openai.com/api/docs/models/gpt-6.2-sol
}


# ---- the scripted model ----

def sse(delta, finish, used):
    """One reply as an OpenAI-compatible stream: the delta, the finish, the usage chunk."""
    chunk = lambda body: "data: " + json.dumps(body) + "\n\n"
    return (chunk({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            + chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
            + chunk({"choices": [], "usage": used}) + "data: [DONE]\n\n")


def usage(shape, prompt, cached, completion=10):
    """Usage as OpenAI reports it (`prompt_tokens_details.cached_tokens`) or DeepSeek does."""
    body = {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}
    if shape == "openai":
        body["prompt_tokens_details"] = {"cached_tokens": cached}
    else:
        body.update(prompt_cache_hit_tokens=cached, prompt_cache_miss_tokens=prompt - cached)
    return body


def step(kind, tool=None, **args):
    """One scripted reply: a call of `tool` with `args`, or (kind "answer") a plain answer."""
    return {"kind": kind, "tool": tool, "args": args}


class Model(http.server.ThreadingHTTPServer):
    """Answers each chat request with the next step of `steps` (a summary request, from
    compaction, with a short summary) and keeps what it was sent. With `simulate_cache`, the
    usage reports as cached the longest prefix (in tokens) the request shares with ANY earlier
    request, as a provider's automatic prefix cache would."""

    def __init__(self, steps, shape="deepseek", simulate_cache=False, keep_bodies=True):
        super().__init__(("127.0.0.1", 0), Handler)
        self.steps, self.shape, self.simulate_cache = list(steps), shape, simulate_cache
        self.keep_bodies, self.lock = keep_bodies, threading.Lock()
        self.requests = []  # one dict per request received, in order

    def answer(self, request):
        """The reply to one request, once it is recorded (with what the cache would serve)."""
        rendered, bounds = render(request)
        # Both programs offer tools in every request of the conversation, and none when they
        # ask for a summary to compact with.
        summary = not request.get("tools")
        with self.lock:
            earlier = [r["rendered"] for r in self.requests] if self.simulate_cache else []
            cached = max((common_prefix(rendered, e) for e in earlier), default=0) // TOKEN_BYTES
            prompt = math.ceil(len(rendered) / TOKEN_BYTES)
            self.requests.append({"summary": summary, "bounds": bounds, "prompt": prompt,
                                  "cached": cached, "messages": len(request["messages"]),
                                  "rendered": rendered if self.keep_bodies else b"",
                                  "bytes": len(rendered)})
            call_id = f"call_{len(self.requests)}"
            if summary:
                scripted = step("summary")
            else:
                scripted = self.steps.pop(0) if self.steps else step("answer")
        used = usage(self.shape, prompt, cached)
        if scripted["kind"] == "summary":
            return sse({"role": "assistant", "content": "Summary: files were read."}, "stop", used)
        if scripted["kind"] in ("answer", "plan"):  # "plan": an answer, then `/plan` is typed
            return sse({"role": "assistant", "content": "Done with this turn."}, "stop", used)
        call = {"index": 0, "id": call_id, "type": "function", "function": {
            "name": scripted["tool"], "arguments": json.dumps(scripted["args"])}}
        return sse({"role": "assistant", "tool_calls": [call]}, "tool_calls", used)

    def session(self):
        """The requests of the conversation itself, without compaction's summary requests."""
        return [r for r in self.requests if not r["summary"]]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        body = self.server.answer(request).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def render(request):
    """The request as a provider's chat template lays it out, in the order its cache sees it:
    the tool definitions first, then every message in order, each as compact JSON with sorted
    keys (a template reads fields by name, so key order and the other body fields, such as
    `max_tokens`, do not reach the prompt). Also where each part starts: ("tools" | "system" |
    "message", offset)."""
    parts = [("tools", t) for t in request.get("tools") or []]
    for message in request["messages"]:
        parts.append(("system" if message.get("role") == "system" else "message", message))
    out, bounds = bytearray(), []
    for label, part in parts:
        bounds.append((label, len(out)))
        out += json.dumps(part, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        out += b"\n"
    return bytes(out), bounds


def common_prefix(a, b):
    """Length of the longest common prefix of two byte strings (binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


# ---- running a program ----

def sandbox(work, files):
    """A project under `work` holding `files` ({relative path: text}) and an empty home."""
    project, home = os.path.join(work, "project"), os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(project, path)), exist_ok=True)
        with open(os.path.join(project, path), "w") as f:
            f.write(text)
    return project, home


def run(program, ours, model, project, home, args, stdin=None, env_extra=None):
    """Run `program` against `model` to its end: (user+sys CPU seconds, peak RSS bytes, stderr)."""
    threading.Thread(target=model.serve_forever, daemon=True).start()
    env = {"PATH": os.environ["PATH"], "HOME": home, "OPENAI_API_KEY": "bench",
           "OPENAI_BASE_URL": f"http://127.0.0.1:{model.server_port}/v1",
           "CORECODER_MODEL": "bench-model", **(env_extra or {})}
    args = args + (["--max-rounds", "1000"] if ours else [])
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([program, *args, "--yes"], cwd=project, env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
        peak = [0]
        sampler = threading.Thread(target=sample_peak, args=(child, program, peak), daemon=True)
        sampler.start()
        child.stdin.write((stdin or "").encode())
        child.stdin.close()
        _, status, rusage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        sampler.join()
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    model.shutdown()
    model.server_close()
    if child.returncode != 0:
        sys.exit(f"{program} exited {child.returncode}:\n{stderr[-2000:]}")
    return rusage.ru_utime + rusage.ru_stime, peak[0], stderr


def sample_peak(child, program, peak):
    """VmHWM of `child`, every millisecond, once it runs `program` (before its exec it is a
    copy of this Python process, and its high-water mark would be ours). A script runs as
    its interpreter, so the sign of the exec is `program` as the first or second argument."""
    cmdline, status = f"/proc/{child.pid}/cmdline", f"/proc/{child.pid}/status"
    while child.returncode is None:
        try:
            with open(cmdline, "rb") as f:
                argv = f.read().split(b"\0")
            with open(status) as f:
                text = f.read()
        except OSError:
            break
        if program.encode() in argv[:2]:
            kb = next((l.split()[1] for l in text.splitlines() if l.startswith("VmHWM:")), "0")
            peak[0] = max(peak[0], int(kb) * 1024)
        time.sleep(0.001)


# ---- row: prefix reuse and dollars per session ----

TURN_ENDS = {21: "plan", 27: "plan", 50: "end"}  # after these rounds: answer, then `/plan` or stop
USER_LINES = "Task one: look around.\n/plan\nTask two: plan a change.\n/plan\nTask three: go on.\n"


def session_steps(project, rounds=50):
    steps = []
    for r in range(1, rounds + 1):
        if r % 7 == 0:
            steps.append(step("cd", "bash", command=f"cd {project}/dir{r // 7}"))
        elif r % 5 == 0:
            tasks = [{"content": f"task {n}", "status": "done" if n * 5 < r else "in_progress"}
                     for n in range(1, r // 5 + 1)]
            steps.append(step("todo", "todo_write", tasks=tasks))
        else:
            steps.append(step("read", "read_file", file_path=f"{project}/src/mod{r}.py"))
        if r in TURN_ENDS:
            steps.append(step("answer" if TURN_ENDS[r] == "end" else "plan"))
    return steps


def session_files():
    files = {f"src/mod{r}.py": "".join(f"def f{r}_{n}(x):\n    return x * {n} + {r}  # line {n}\n"
                                       for n in range(30)) for r in range(1, 51)}
    files.update({f"dir{k}/README": "a subdirectory\n" for k in range(1, 8)})
    return files


def checked(requests, expected):
    """Said beside a figure when the session did not send one request per scripted step."""
    missed = f" (**{len(requests)} requests, not {expected}: the script did not run through**)"
    return "" if len(requests) == expected else missed


def breaks(requests, steps):
    """Per transition i -> i+1: (share of request i's bytes request i+1 repeats as its prefix,
    the cause when it is below 1). A change inside an earlier message, or fewer messages, is
    compaction; a change in the system prompt is put down to the step that came before it."""
    shares, causes = [], []
    for i, (this, after) in enumerate(zip(requests, requests[1:])):
        same = common_prefix(this["rendered"], after["rendered"])
        shares.append(same / len(this["rendered"]))
        if same == len(this["rendered"]):
            continue
        where = [label for label, start in this["bounds"] if start <= same][-1]
        if where == "message" or after["messages"] < this["messages"]:
            causes.append("compaction")
        elif where == "system" and i < len(steps) and steps[i]["kind"] in ("todo", "cd", "plan"):
            causes.append(steps[i]["kind"])
        else:
            causes.append(f"other ({where})")
    return shares, causes


def prefix_rows(program, ours, shape):
    with tempfile.TemporaryDirectory() as work:
        project, home = sandbox(work, session_files())
        steps = session_steps(project)
        model = Model(list(steps), shape, simulate_cache=True)
        run(program, ours, model, project, home, [], stdin=USER_LINES)
    requests = model.session()
    shares, causes = breaks(requests, steps)
    counts = {c: causes.count(c) for c in sorted(set(causes))}
    reuse = (f"mean {100 * statistics.mean(shares):.1f} %, min {100 * min(shares):.1f} %; "
             f"{len(causes)} of the {len(shares)} requests after the first break ("
             + ", ".join(f"{n} {c}" for c, n in counts.items()) + ")")
    reuse += checked(requests, len(steps))
    return {"prefix reuse": reuse, "dollars per session": dollars(model.requests, requests)}


def dollars(every, session):
    """Each rate's cost of the input as the simulated cache served it, against the floor:
    every request's bytes served from cache except what it adds beyond the previous request."""
    floor_cached = [0] + [min(a["prompt"], b["prompt"]) for a, b in zip(session, session[1:])]
    hit = sum(r["cached"] for r in every) / max(1, sum(r["prompt"] for r in every))
    out = []
    for name, (miss, cached) in PRICES.items():
        bill = lambda prompt, hits: ((prompt - hits) * miss + hits * cached) / 1e6
        actual = sum(bill(r["prompt"], r["cached"]) for r in every)
        floor = sum(bill(r["prompt"], c) for r, c in zip(session, floor_cached))
        floor += sum(bill(r["prompt"], r["cached"]) for r in every if r["summary"])
        out.append(f"{name}: ${actual:.4f} (floor ${floor:.4f}, {actual / floor:.2f}×)")
    tokens = sum(r["prompt"] for r in every)
    return f"{tokens:,} input tokens, {100 * hit:.1f} % cached; " + "; ".join(out)


# ---- row: cache breaks in a long session ----

def long_row(program, ours, rounds=200, window=40_000):
    """Every read is 8 KB but every 50th, 58 KB: that one pushes the history over the 90 % tier."""
    line = lambda n, r: f"row {n:04d} of file {r}: " + "x" * 50 + "\n"
    files = {f"big{r}.txt": "".join(line(n, r) for n in range(800 if r % 50 == 49 else 110))
             for r in range(rounds)}
    with tempfile.TemporaryDirectory() as work:
        project, home = sandbox(work, files)
        steps = [step("read", "read_file", file_path=f"big{r}.txt") for r in range(rounds)]
        model = Model(steps)
        _, _, stderr = run(program, ours, model, project, home, ["-p", "Read every file."],
                           env_extra={"CORECODER_MAX_CONTEXT": str(window)})
    requests = model.session()
    _, causes = breaks(requests, [])
    # corecoder says each compaction on stderr: "context Snip: 22018 → 4018 tokens".
    tiers = [line.split(":")[0].split()[-1] for line in stderr.splitlines()
             if line.startswith("context ")]
    counted = ", ".join(f"{tiers.count(t)} {t}" for t in sorted(set(tiers)))
    per = f"{len(causes) / len(tiers):.2f}" if tiers else "—"
    return (f"{rounds} rounds, {window:,}-token window: {len(causes)} breaks in {len(requests)} "
            f"requests, {len(tiers)} compactions ({counted}): {per} breaks per compaction"
            + checked(requests, rounds + 1))


# ---- row: cost per round vs history size ----

# One big read: under both programs' 2000-line default and corecoder's 256 KiB cap.
GROW_BYTES = 160_000


def size_row(program, ours, sizes):
    cells = []
    for tokens in sizes:
        chunk = min(GROW_BYTES, tokens * TOKEN_BYTES)
        grow = math.ceil(tokens * TOKEN_BYTES / chunk)
        line = "y" * 79 + "\n"
        files = {f"grow{g}.txt": line * (chunk // 80) for g in range(grow)}
        files.update({f"small{s}.txt": f"small file {s}\n" for s in range(20)})
        reads = lambda names: [step("read", "read_file", file_path=n) for n in names]
        grow_steps = reads(f"grow{g}.txt" for g in range(grow))
        full_steps = grow_steps + reads(f"small{s}.txt" for s in range(20))
        cpu, peaks, history, note = [], [], 0, ""
        env = {"CORECODER_MAX_CONTEXT": "1000000000"}  # never compact
        with tempfile.TemporaryDirectory() as work:
            project, home = sandbox(work, files)
            for _ in range(3):
                base = run(program, ours, Model(grow_steps, keep_bodies=False), project, home,
                           ["-p", "Read the files."], env_extra=env)[0]
                model = Model(full_steps, keep_bodies=False)
                took, peak, _ = run(program, ours, model, project, home, ["-p", "Read the files."],
                                    env_extra=env)
                cpu.append((took - base) / 20)
                peaks.append(peak)
                history = model.requests[-1]["bytes"]
                note = note or checked(model.session(), len(full_steps) + 1)
        label = f"{tokens // 1000}k" if tokens < 1_000_000 else f"{tokens // 1_000_000}M"
        cells.append(f"{label}: {1000 * statistics.median(cpu):.2f} ms, "
                     f"{statistics.median(peaks) / 2**20:.1f} MiB "
                     f"(history {history / 1e6:.2f} MB){note}")
    return "; ".join(cells)


# ---- the floor under the last row: sending the body over loopback, nothing else ----

FLOOR_BYTES = 4_340_000  # the 1M-token history's request body in the size row


def floor_row(sends=20, batches=5):
    """The CPU this thread spends to send FLOOR_BYTES over loopback to a reader in another
    process that only reads (the "floor" row). Median of `batches` of `sends`."""
    reader = subprocess.Popen([sys.executable, "-c", (
        "import socket, sys\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "print(server.getsockname()[1], flush=True)\n"
        "peer, _ = server.accept()\n"
        "while peer.recv(1 << 20):\n"
        "    pass\n")], stdout=subprocess.PIPE, text=True)
    sender = socket.create_connection(("127.0.0.1", int(reader.stdout.readline())))
    body = memoryview(b"y" * FLOOR_BYTES)
    cpu = lambda: sum(resource.getrusage(resource.RUSAGE_THREAD)[:2])
    cells = []
    for label, size in (("one write", FLOOR_BYTES), ("128 KiB writes", 128 * 1024)):
        each = []
        for _ in range(batches):
            start = cpu()
            for _ in range(sends):
                for at in range(0, FLOOR_BYTES, size):
                    sender.sendall(body[at:at + size])
            each.append((cpu() - start) / sends)
        cells.append(f"{label}: {1000 * statistics.median(each):.2f} ms")
    sender.close()
    reader.wait()
    return f"{FLOOR_BYTES / 1e6:.2f} MB: " + "; ".join(cells)


# ---- the table ----

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corecoder", required=True, help="the corecoder binary to measure")
    parser.add_argument("--peer", default=os.path.join(ROOT, "target/bench-venv/bin/corecoder"),
                        help="CoreCoder's `corecoder` script (default: in target/bench-venv); "
                        "'none' skips it")
    parser.add_argument("--rows", default="prefix,long,size,floor",
                        help="comma-separated: prefix,long,size,floor")
    parser.add_argument("--usage", default="deepseek", choices=["deepseek", "openai"],
                        help="the usage shape the simulated cache reports in")
    options = parser.parse_args()
    ours = os.path.abspath(options.corecoder)
    peer = os.path.abspath(options.peer) if os.path.exists(options.peer) else None
    if peer is None:
        print("note: CoreCoder not found; its column is empty", file=sys.stderr)
    rows = {}  # row name -> (ours, peer)
    wanted = options.rows.split(",")
    if "prefix" in wanted:
        mine = prefix_rows(ours, True, options.usage)
        theirs = prefix_rows(peer, False, options.usage) if peer else {}
        for name in mine:
            rows[name] = (mine[name], theirs.get(name, "—"))
    if "long" in wanted:
        rows["cache breaks in a long session"] = (long_row(ours, True), "—")
    if "size" in wanted:
        rows["cost per round vs history size (CPU per round, peak RSS)"] = (
            size_row(ours, True, [10_000, 100_000, 1_000_000]),
            size_row(peer, False, [10_000, 100_000]) if peer else "—")
    if "floor" in wanted:
        rows["loopback floor (the sender's CPU per body sent, no program)"] = (floor_row(), "—")
    print("| row | corecoder | CoreCoder 0.8 |\n|---|---|---|")
    for name, (mine, theirs) in rows.items():
        print(f"| {name} | {mine} | {theirs} |")


if __name__ == "__main__":
    main()
