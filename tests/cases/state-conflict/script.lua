-- commit_elsewhere is a tool of the conformance kit: it commits as another execution would.
local seen = state.get("counter")
tools.call("commit_elsewhere", { session = "state-conflict", key = "counter", value = 10 })
state.set("counter", seen + 1)
return seen
