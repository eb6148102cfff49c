//! The `--help` text: every flag, the variables, the files under `~/.corecoder` and the exit
//! codes. `main.rs` prints it; `tests/it/docs.rs` holds docs/reference.md's tables to it, and
//! `tests/it/readme.rs` the README's settings. Nothing here parses anything.

pub const HELP: &str = "\
corecoder - a minimal AI coding agent for any OpenAI-compatible model

Usage: corecoder [OPTIONS]

  -p, --prompt TEXT     run one task non-interactively; the answer goes to stdout. -p - reads
                        the task from stdin; with -p TEXT, piped stdin is added after TEXT
  -y, --yes             allow mutating tools (bash, write_file, edit_file, agent) without asking
  -m, --model NAME      model name                     [env CORECODER_MODEL, default gpt-5.5]
      --base-url URL    OpenAI-compatible base URL     [env OPENAI_BASE_URL or CORECODER_BASE_URL,
                        default https://api.openai.com/v1]
      --api-key KEY     API key  [env CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY;
                        anthropic: CORECODER_API_KEY or ANTHROPIC_API_KEY]
      --provider NAME   the API spoken: openai (chat completions, the default), anthropic
                        (Messages API; base URL ANTHROPIC_BASE_URL or CORECODER_BASE_URL,
                        default https://api.anthropic.com) or responses [env CORECODER_PROVIDER;
                        default anthropic when the base URL is api.anthropic.com]
      --max-rounds N    cap on tool-call rounds per task [default 50]
      --max-cost USD    stop before a request once this much is spent [env CORECODER_MAX_COST]
      --output-format F with -p: text (default), json (one object at the end) or stream-json
      --trace FILE      write every request, stream line and tool call to FILE as JSON lines
                        (after a header: version, dialect, model; never the API key)
      --replay FILE     run a session recorded with --trace again, offline and without a key:
                        its replies are served on 127.0.0.1, the tools run here. The recorded
                        tasks run in order, as with -p (mutating tools only with --yes, which a
                        replay does not imply); -p TEXT runs TEXT instead. Each request is
                        compared with the recorded one: the first difference (message, field,
                        both sides) stops the replay (exit 7); the report says how many rounds
                        matched. Never opens the interactive session
      --replay-loose    with --replay: report the differences and go on past them
  -r, --resume ID       continue a saved session (see /sessions)
  -c, --continue        continue the most recent session started in this directory
      --sandbox MODE    where bash, write_file and edit_file may write: off (default),
                        read-only or workspace-write (Landlock; the launch and temp dirs,
                        fixed for the session; bash can still chmod/touch outside them)
                        [env CORECODER_SANDBOX]
      --add-dir DIR     one more root: read without asking, and writable in workspace-write
                        (repeatable; no env variable). Outside the roots (launch and temp
                        dirs, each --add-dir) reads ask, or are refused by -p without --yes
      --allow-destructive NAMES  let --yes run these destructive commands, comma-separated:
                        git-push-force, git-reset-hard, git-clean, git-discard,
                        git-branch-delete, git-stash-clear, rm-git-dir, find-delete
                        [env CORECODER_ALLOW_DESTRUCTIVE; not from an untrusted .env].
                        Interactive sessions ask instead; catastrophic commands
                        (rm -rf ~, mkfs, curl | sh, ...) never run.
      --trust-project   trust this folder's .corecoder/hooks.json, .mcp.json, settings files
                        (.claude/settings*.json, .corecoder/settings.json) and .env as they
                        are now, and remember it (in ~/.corecoder/trusted.json)
      --demo            run the offline demo (also the default when no API key is set); not
                        with -p, -r or -c
      --acp             serve the Agent Client Protocol on stdin/stdout for an editor (Zed,
                        JetBrains, Neovim, Emacs): its sessions ask the editor before changes,
                        as the interactive session asks you (--yes allows all); not with -p,
                        -r, -c, --demo or --replay (docs/editor.md)
  -v, --version         print the version
  -h, --help            print this help

Environment: CORECODER_MAX_TOKENS (4096; at least 1), CORECODER_TEMPERATURE (0; 0 to 2),
CORECODER_MAX_CONTEXT (128000; at least 4096), CORECODER_IDLE_TIMEOUT (seconds without a data
event before a retry, 300), CORECODER_REQUEST_TIMEOUT (seconds one reply may take in all,
1800), CORECODER_FALLBACK_MODELS (m1,m2: models to switch to when the current one keeps
failing), CORECODER_TOOL_CHOICE (auto, required, none or a tool's name; not sent when unset;
for llama-cpp-python name a tool: docs/providers.md). A value out of its range, or an empty
--model or --api-key, is a usage error. A .env file in the current directory or the nearest
parent (not $HOME or above) is read without overriding the environment. NO_COLOR: no colour and
no Markdown drawing; TERM=dumb: neither, and no spinner. No child of corecoder (bash, hooks,
MCP servers) sees secret-looking variables (*KEY*, *TOKEN*, *PASSWORD*, *_DSN, DATABASE_URL,
URLs with user:password@, ...: docs/safety.md), except those in
CORECODER_ENV_ALLOW=NAME1,NAME2, nor can it read them or --api-key from corecoder's /proc.

Untrusted projects (see --trust-project, /trust; a changed file is untrusted again): their hooks,
MCP servers and settings files' permission rules do not count (a session asks first), their .env
chooses no key, server, provider or model, and .env settings that widen what tools may do
(CORECODER_ENV_ALLOW, ...) are ignored.
After a sandboxed session, a changed .git/config or .git/hooks turns git off for bash until trusted.

Files in ~/.corecoder (private to you; HOME must be an existing directory, none is made):
sessions/ (every run, for -r and -c), checkpoints/ (for /undo), history (what you typed),
permissions.json (\"always\" tools), project-rules.json (\"always\" rules per project),
trusted.json and trusted-git/ (trusted projects); yours to write: pricing.json (prices),
hooks.json, mcp.json, settings.json (permission rules, as Claude Code's ~/.claude/settings.json,
also read; a trusted project's .claude/settings.json too).

Exit codes: 0 done, 1 API failure, 2 usage error, 3 round cap reached, 4 budget spent,
5 stopped for repeating the same call, 6 answer cut off at the output token limit,
7 a --replay left its trace, 130 interrupted, 141 the output was closed (e.g. piped into head).
";
