"""okfbench's own agent loop as an external agent: `okfbench agent` on the
question okfbench wrote on stdin, talking to OPENAI_BASE_URL (the run's
proxy). argv: OKFBENCH_BINARY BUNDLE_DIR [agent flags...]; prints agent --json."""
import json, os, sys

question = json.load(sys.stdin)
binary, bundle, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
os.execv(binary, [binary, "agent", bundle, question["text"], "--model", "openai:" + os.environ["OKFBENCH_MODEL"],
                  "--json", "--no-index-cache", *flags])
