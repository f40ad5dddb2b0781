function inner() {
  throw new Error("deep trouble");
}
function outer() {
  inner();
}
outer();
