-- rendezvous is a tool of the conformance kit; run one by one, the first call never returns.
local meet = { "rendezvous", { group = "calls-run-concurrently", parties = 3 } }
return tools.gather({ meet, meet, meet })
