#!/usr/bin/env python3
"""What one real `-p` turn executes: the files and source lines of src/ that run when the
model asks for one read_file call and then answers.

Starts a scripted OpenAI-compatible server on loopback (it asks for `read_file notes.txt`
until the request carries a tool result, then answers), runs the binary under valgrind's
callgrind with `-p`, and counts the distinct (file, line) pairs of src/ that executed, on
every thread, and the non-blank lines above the tests of every file touched (the count
tests/it/docs.rs budgets with): what a reader following the turn has in front of them. Needs
valgrind and a debug build; the checkout is the nearest folder above the binary with a
Cargo.toml:

    cargo build --example minimal && python3 bench/turn_path.py target/debug/examples/minimal
    cargo build && python3 bench/turn_path.py target/debug/corecoder

Prints one line per folder and per file, then the totals and the files under extras/. No
network but loopback.

    python3 bench/turn_path.py --fork

makes the fork tests/it/docs.rs makes (a copy in target/fork/crate, src/extras/ deleted but
null.rs, src/app/ deleted, the one change to src/lib.rs), builds its minimal example there
(target/fork/target keeps the dependencies between runs) and measures the same turn on it.

    python3 bench/turn_path.py --turn BINARY

counts only the turn itself: what runs inside `Agent::run_task` (the loop's entry; `Agent::run`
is a one-line wrapper around it) and on the threads the turn starts (the pool's workers, the
Ctrl+C watcher of a request, a read's helper thread), not the set-up before it or the exit
after.

    python3 bench/turn_path.py --serve

only serves the same two replies on 127.0.0.1:8765 until Ctrl+C: the scripted model that
docs/walkthrough.md steps through a turn with.
"""
import collections, http.server, json, os, shutil, subprocess, sys, tempfile, threading

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


# Where the turn runs, one exact name per thread entry (a wildcard would also match functions
# nested inside, `*Agent::run*` matched `Agent::run_task` and ureq's `Agent::run_via_middleware`,
# and each nested match toggled collection off again: the old `--turn` lost about 15%). Toggles
# are per thread, so no name below may run inside another on the same thread (a sub-agent's
# `run_task` on a pool worker would: the scripted turn calls no `agent` tool): the loop's entry
# (`Agent::run` is a one-line wrapper around it), the pool's worker, the request's Ctrl+C
# watcher, a bounded read's helper thread.
TURN = ["corecoder::core::agent::Agent::run_task", "corecoder::core::dispatch::work",
        "corecoder::tools::support::cancel::shut_down_on_cancel",
        "corecoder::tools::support::bounded::run_boxed::{{closure}}"]


def checkout_of(binary):
    """The checkout the binary was built from: the nearest folder above it with a Cargo.toml
    (target/debug/corecoder is three levels down, target/debug/examples/minimal four)."""
    folder = os.path.dirname(binary)
    while not os.path.isfile(os.path.join(folder, "Cargo.toml")):
        if os.path.dirname(folder) == folder:
            sys.exit(f"no Cargo.toml above {binary}: pass a binary built inside a checkout")
        folder = os.path.dirname(folder)
    return folder


def make_fork(root):
    """The fork `tests/it/docs.rs` (`a_fork_without_extras_builds_the_minimal_example`) makes,
    built: a copy of the checkout in target/fork/crate with every file under src/extras/ but
    null.rs and all of src/app/ deleted, and the one change to src/lib.rs. Its own target
    directory (target/fork/target) keeps the dependencies built between runs."""
    fork, target = os.path.join(root, "target", "fork", "crate"), os.path.join(root, "target", "fork", "target")
    shutil.rmtree(fork, ignore_errors=True)
    os.makedirs(fork)
    subprocess.run(f"tar -c --exclude=./target --exclude=./.git --exclude=./fuzz . | tar -x -m -C '{fork}'",
                   shell=True, cwd=root, check=True)
    for folder, _, names in os.walk(os.path.join(fork, "src", "extras")):
        for name in names:
            if name != "null.rs":
                os.remove(os.path.join(folder, name))
    shutil.rmtree(os.path.join(fork, "src", "app"))
    lib_rs = os.path.join(fork, "src", "lib.rs")
    with open(lib_rs) as f:
        lib = f.read()
    if "\npub mod extras;\n" not in lib or "\npub mod app;\n" not in lib:
        sys.exit("src/lib.rs no longer has the lines the fork changes (see tests/it/docs.rs)")
    lib = lib.replace("\npub mod extras;\n", "\n#[path = \"extras/null.rs\"]\npub mod extras;\n")
    with open(lib_rs, "w") as f:
        f.write(lib.replace("\npub mod app;\n", "\n"))
    subprocess.run(["cargo", "build", "--offline", "--example", "minimal"], cwd=fork, check=True,
                   env=dict(os.environ, CARGO_TARGET_DIR=target))
    return os.path.join(target, "debug", "examples", "minimal"), fork


def main():
    args = sys.argv[1:]
    turn, fork = "--turn" in args, "--fork" in args
    args = [a for a in args if a not in ("--turn", "--fork")]
    if args == ["--serve"]:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 8765), Server)
        print("serving on http://127.0.0.1:8765/v1 (Ctrl+C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            return
    if fork:
        binary, root = make_fork(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    else:
        binary = os.path.abspath(args[0] if args else "target/debug/corecoder")
        root = checkout_of(binary)
    src = os.path.join(root, "src") + os.sep
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
        executed = read_callgrind(out, src)
    report(executed, src)


def report(executed, src):
    """One line per folder and per file (lines executed, non-blank lines above the tests), then
    the totals and the files under extras/."""
    by_file = collections.Counter(f for f, _ in executed)
    whole = {name: code_lines(src + name) for name in by_file}
    by_folder = collections.defaultdict(list)
    for name in by_file:
        by_folder[os.path.dirname(name)].append(name)
    for folder in sorted(by_folder):
        names = by_folder[folder]
        print(f"{folder or 'src'}/: {len(names)} files, {sum(by_file[n] for n in names)} lines "
              f"executed, {sum(whole[n] for n in names)} lines")
    for name in sorted(by_file):
        print(f"  {name}: {by_file[name]} executed of {whole[name]}")
    extras = sorted(n for n in by_file if n.startswith("extras" + os.sep))
    print(f"total: {len(by_file)} files, {len(executed)} distinct lines executed")
    print(f"the files touched hold {sum(whole.values())} non-blank lines above their tests")
    print(f"under extras/: {len(extras)} files ({sum(whole[n] for n in extras)} lines): {', '.join(extras) or 'none'}")


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
