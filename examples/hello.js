// The smallest script: compute, print, return a JSON result.
// Run: forge-host run examples/hello.js
const languages = ["JavaScript", "Python", "anything that compiles to a component"];
console.log(`hello from QuickJS inside a WebAssembly component`);
const echoed = await tools.call("echo", { greeting: "hello", to: languages });
return { echoed, at: new Date().toISOString().slice(0, 4) >= "2024" };
