# rendezvous is a tool of the conformance kit; run one by one, the first call never returns.
import forge
meet = ("rendezvous", {"group": "calls-run-concurrently", "parties": 3})
forge.result(forge.gather([meet, meet, meet]))
