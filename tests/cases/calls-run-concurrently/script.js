// rendezvous is a tool of the conformance kit; run one by one, the first call never returns.
const meet = () => tools.call("rendezvous", { group: "calls-run-concurrently", parties: 3 });
return await Promise.all([meet(), meet(), meet()]);
