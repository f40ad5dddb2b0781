# commit_elsewhere is a tool of the conformance kit: it commits as another execution would.
import forge
seen = forge.state.get("counter")
forge.call("commit_elsewhere", {"session": "state-conflict", "key": "counter", "value": 10})
forge.state.set("counter", seen + 1)
forge.result(seen)
