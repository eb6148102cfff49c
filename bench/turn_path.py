#!/usr/bin/env python3
"""What one real `-p` turn executes: the files and source lines of src/ that run when the
model asks for one read_file call and then answers.

Starts a scripted OpenAI-compatible server on loopback (it asks for `read_file notes.txt`
until the request carries a tool result, then answers), runs the binary under valgrind's
callgrind with `-p`, and counts the distinct (file, line) pairs of src/ that executed, on
every thread. Needs valgrind and a debug build:

    cargo build && python3 bench/turn_path.py target/debug/corecoder

Prints one line per folder and per file, then the totals. No network but loopback.

    python3 bench/turn_path.py --turn target/debug/corecoder

counts only the turn itself, the issue's "strict path": what runs inside `Agent::run*` (the
entry the binary calls, whatever its name in that version) and on the threads the turn starts
(the pool's workers, the Ctrl+C watcher of a request, a read's helper thread), not the set-up
before it or the exit after. It also sums the non-blank lines above the tests of every file
touched: what a reader following the turn has in front of them.

    python3 bench/turn_path.py --serve

only serves the same two replies on 127.0.0.1:8765 until Ctrl+C: the scripted model that
docs/walkthrough.md steps through a turn with.
"""
import http.server, json, os, subprocess, sys, tempfile, threading, collections

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"file_path": "notes.txt"})}}


def chunk(delta, finish=None):
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"choices": [choice]}) + "\n\n"


REPLIES = [
    chunk({"role": "assistant", "tool_calls": [dict(CALL, index=0)]}) + chunk({}, "tool_calls"),
    chunk({"role": "assistant", "content": "The notes say hello."}) + chunk({}, "stop"),
]


class Server(http.server.BaseHTTPRequestHandler):
    served = 0

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        # The call until its result is in the history; then the answer.
        answered = request["messages"][-1]["role"] == "tool"
        body = REPLIES[1 if answered else 0] + "data: [DONE]\n\n"
        Server.served += 1
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


# Where the turn runs: the loop's entry (`run`, `run_task`; `run_asking` in older versions),
# the pool's worker function, the request's Ctrl+C watcher, a bounded read's helper thread.
TURN = ["*Agent::run*", "*pool::work", "*dispatch::work", "*shut_down_on_cancel*", "*run_boxed*"]


def main():
    turn = "--turn" in sys.argv[1:]
    if turn:
        sys.argv.remove("--turn")
    if sys.argv[1:] == ["--serve"]:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 8765), Server)
        print("serving on http://127.0.0.1:8765/v1 (Ctrl+C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            return
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/corecoder")
    # The checkout the binary was built from: target/debug/corecoder is three levels down.
    root = os.path.dirname(os.path.dirname(os.path.dirname(binary)))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as work:
        project, home = os.path.join(work, "project"), os.path.join(work, "home")
        os.makedirs(project), os.makedirs(home)
        with open(os.path.join(project, "notes.txt"), "w") as f:
            f.write("hello\n")
        out = os.path.join(work, "callgrind.out")
        env = {"PATH": os.environ["PATH"], "HOME": home, "CORECODER_API_KEY": "sk-test",
               "CORECODER_BASE_URL": f"http://127.0.0.1:{server.server_port}/v1"}
        only_turn = ["--collect-atstart=no"] + [f"--toggle-collect={t}" for t in TURN] if turn else []
        run = subprocess.run(["valgrind", "--tool=callgrind", "--compress-strings=no",
                              "--compress-pos=no", f"--callgrind-out-file={out}", *only_turn,
                              binary, "-p", "What do the notes say?"],
                             cwd=project, env=env, capture_output=True, text=True, timeout=600)
        if "The notes say hello." not in run.stdout or Server.served != 2:
            sys.exit(f"the turn did not run as scripted:\n{run.stdout}\n{run.stderr[-2000:]}")
        executed = read_callgrind(out, os.path.join(root, "src") + os.sep)
    by_file = collections.Counter(f for f, _ in executed)
    by_folder = collections.Counter(os.path.dirname(f) for f, _ in executed)
    folder_files = collections.Counter(os.path.dirname(f) for f in by_file)
    for folder in sorted(by_folder):
        print(f"{folder or 'src'}/: {folder_files[folder]} files, {by_folder[folder]} lines")
    for name in sorted(by_file):
        print(f"  {name}: {by_file[name]}")
    print(f"total: {len(by_file)} files, {len(executed)} distinct lines executed")
    lines = sum(code_lines(os.path.join(root, "src", name)) for name in by_file)
    print(f"the files touched hold {lines} non-blank lines above their tests")


def code_lines(path):
    """Non-blank lines above `mod tests` (the count tests/it/docs.rs uses for the budget)."""
    count, pending = 0, False
    with open(path) as f:
        for line in f:
            if line.startswith("mod tests"):
                break
            if line.rstrip() == "#[cfg(test)]":
                pending = True
                continue
            if line.strip():
                count += 1 + pending
                pending = False
    return count


def read_callgrind(path, src):
    """(file under src/, line) pairs with a cost: cost lines follow `fl=`/`fi=`/`fe=` lines."""
    executed, current = set(), None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("fl=", "fi=", "fe=")):
                name = line[3:].strip()
                current = name[len(src):] if name.startswith(src) else None
            elif current and line[:1].isdigit():
                executed.add((current, int(line.split()[0])))
    return executed


if __name__ == "__main__":
    main()
