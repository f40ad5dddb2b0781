-- A tool call that outlives the deadline: the host stops the run while the call is in flight.
tools.call("sleep", { ms = 60000 })
return "woke"
